// Router and PTY host as separate processes (`pty-ws serve` + `pty-ws pty-host`), the way an
// operator runs them: the router is SIGKILLed and restarted while sessions run and print.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { until } from '../helpers/wait.ts';
import { expectNoneLeft, killMultiplexers } from '../helpers/leftovers.ts';
import { Rest } from '../helpers/rest.ts';

const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;

interface Proc {
  proc: ChildProcess;
  out: () => string;
  exit: Promise<unknown>;
}

let dir = '';
const procs: Proc[] = [];
const clients: TestClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  // Routers first: a router that outlives its host would start a host of its own meanwhile.
  for (const p of procs.splice(0).reverse()) {
    if (p.proc.exitCode === null && p.proc.signalCode === null) {
      p.proc.kill('SIGTERM');
      await p.exit;
    }
  }
  await killMultiplexers(join(dir, 'host.sock'));
  await expectNoneLeft(dir);
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): Proc {
  let out = '';
  const proc = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', PTY_WS_DEV_TOKEN_POLICY: 'per-start' }, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const p = { proc, out: () => out, exit: new Promise((resolve) => proc.once('exit', resolve)) };
  procs.push(p);
  return p;
}

async function startHost(): Promise<Proc> {
  const host = run(['pty-host', '--socket', join(dir, 'host.sock')]);
  await until(() => host.out().includes('pty-host listening'), `the host to listen (${host.out()})`);
  return host;
}

async function startRouter(): Promise<{ router: Proc; rest: Rest; token: string }> {
  const router = run(['serve', '--port', '0', '--state-dir', join(dir, 'state'), '--pty-socket', join(dir, 'host.sock')]);
  const origin = await until(() => /listening on (http:\/\/\S+)/.exec(router.out())?.[1], `the router to listen (${router.out()})`);
  const token = await until(() => /dev token:\s+(\S+)/.exec(router.out())?.[1], 'the dev token');
  return { router, rest: new Rest(origin, token), token };
}

async function attach(url: string, token: string, extra: Record<string, unknown> = {}): Promise<TestClient> {
  const c = await TestClient.connect(url, { token });
  clients.push(c);
  await c.join({ role: 'controller' }, extra);
  return c;
}

function waitForText(c: TestClient, text: string): Promise<unknown> {
  return c.waitFor(() => c.screen().includes(text) || c.output().includes(text), `${JSON.stringify(text)} on the screen`, 15_000);
}

const lastSequence = (c: TestClient): number => Math.max(0, ...c.frames().map((f) => f.sequence));
const count = (text: string, part: string): number => text.split(part).length - 1;

describe('router SIGKILL with a standalone PTY host', () => {
  it('sessions keep running and printing; a new router re-adopts them, replay_from fills the gap, the counter goes on', async () => {
    dir = mkdtempSync(join(tmpdir(), 'pty-ws-survival-'));
    await startHost();
    const first = await startRouter();
    const shell = await first.rest.create({ command: 'PS1="nat$ " exec /bin/sh' });
    const tmux = await first.rest.create({ session_backend: 'tmux', command: 'PS1="mux$ " exec /bin/sh' });
    const ender = await first.rest.create({ command: 'sleep 1.5; exit 3' });

    const t = await attach(tmux.attach_url, first.token);
    await waitForText(t, 'mux$');
    t.send('pty.session_input', { data: b64('echo tmux-before\r') });
    await t.waitForOutput('tmux-before');
    const c = await attach(shell.attach_url, first.token);
    await waitForText(c, 'nat$');
    await attach(ender.attach_url, first.token);
    c.send('pty.session_input', { data: b64('for i in 1 2 3 4 5 6; do echo tick-$i; sleep 0.5; done\r') });
    await c.waitForOutput('tick-2\r\n');
    // Between two ticks: what this client has seen is committed, and nothing is in flight.
    await new Promise((r) => setTimeout(r, 150));
    const seen = lastSequence(c);
    const seenTmux = lastSequence(t);

    first.router.proc.kill('SIGKILL');
    await first.router.exit;
    await c.waitForClose();
    // Ticks 3..6 are printed and `ender` exits while no router runs.
    await new Promise((r) => setTimeout(r, 2500));

    const second = await startRouter();
    expect(await second.rest.get(shell.session_id)).toMatchObject({ state: 'running' });
    expect(await second.rest.get(tmux.session_id)).toMatchObject({ state: 'running' });
    expect(await second.rest.get(ender.session_id)).toMatchObject({ state: 'closed', close_reason: 'normal', exit_code: 3 });

    const c2 = await attach(shell.attach_url.replace(/^ws:\/\/[^/]+/, second.rest.origin.replace(/^http/, 'ws')), second.token, { replay_from: seen });
    await c2.waitForOutput('tick-6\r\n');
    const seqs = c2.frames().filter((f) => ['Output', 'MembershipChanged'].includes(String(f.payload.kind))).map((f) => f.sequence);
    // Every frame after the cursor, numbered on from it: no gap, no number used twice.
    expect(seqs[0]).toBe(seen + 1);
    expect(seqs).toEqual(seqs.map((_, i) => seen + 1 + i));
    const text = c2.output();
    for (const tick of ['tick-3', 'tick-4', 'tick-5', 'tick-6']) expect(count(text, `${tick}\r\n`)).toBe(1);
    expect(text).not.toContain('tick-2\r\n');
    // The join's Keyframe was cut from a screen rebuilt from the log.
    const key = c2.frames().find((f) => f.payload.kind === 'Keyframe')!;
    expect(Buffer.from(String(key.payload.snapshot), 'base64').toString()).toContain('tick-1');
    c2.send('pty.session_input', { data: b64('echo after-$((40+2))\r') });
    await c2.waitForOutput('after-42');

    const tmuxUrl = tmux.attach_url.replace(/^ws:\/\/[^/]+/, second.rest.origin.replace(/^http/, 'ws'));
    const t2 = await attach(tmuxUrl, second.token, { replay_from: seenTmux });
    expect(t2.screen()).toContain('tmux-before');
    const ended = await TestClient.connect(ender.attach_url.replace(/^ws:\/\/[^/]+/, second.rest.origin.replace(/^http/, 'ws')), { token: second.token });
    clients.push(ended);
    ended.send('pty.join_session', { role: 'observer' });
    const closed = await ended.waitForFrame((f) => f.payload.kind === 'Closed', 'the Closed of the session that ended meanwhile');
    expect(closed.payload).toMatchObject({ reason: 'normal', exit_code: 3 });

    for (const id of [shell.session_id, tmux.session_id]) expect(await second.rest.delete(id)).toBe(202);
    await c2.waitForClose();
    await t2.waitForClose();
  }, 90_000);

  it('a PTY host restarted while no router runs: the new router closes the native session it lost (error) and keeps the tmux one', async () => {
    dir = mkdtempSync(join(tmpdir(), 'pty-ws-survival-'));
    const host = await startHost();
    const first = await startRouter();
    const native = await first.rest.create({ command: 'PS1="nat$ " exec /bin/sh' });
    const tmux = await first.rest.create({ session_backend: 'tmux', command: 'PS1="mux$ " exec /bin/sh' });
    await waitForText(await attach(native.attach_url, first.token), 'nat$');
    const t = await attach(tmux.attach_url, first.token);
    await waitForText(t, 'mux$');
    t.send('pty.session_input', { data: b64('echo kept-$((6*7))\r') });
    await t.waitForOutput('kept-42');
    await new Promise((r) => setTimeout(r, 150));

    first.router.proc.kill('SIGKILL');
    await first.router.exit;
    host.proc.kill('SIGTERM');
    await host.exit;
    await startHost();
    const second = await startRouter();

    const lost = await second.rest.get(native.session_id);
    expect(lost).toMatchObject({ state: 'closed', close_reason: 'error' });
    expect(await second.rest.get(tmux.session_id)).toMatchObject({ state: 'running' });
    const wsOrigin = second.rest.origin.replace(/^http/, 'ws');
    const n2 = await TestClient.connect(native.attach_url.replace(/^ws:\/\/[^/]+/, wsOrigin), { token: second.token });
    clients.push(n2);
    n2.send('pty.join_session', { role: 'observer' });
    const closed = await n2.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed');
    expect(closed.payload).toMatchObject({ reason: 'error', exit_code: null, detail: expect.stringContaining('no router') });
    const t2 = await attach(tmux.attach_url.replace(/^ws:\/\/[^/]+/, wsOrigin), second.token);
    expect(t2.screen()).toContain('kept-42');
    expect(await second.rest.delete(tmux.session_id)).toBe(202);
    await t2.waitForClose();
  }, 90_000);
});
