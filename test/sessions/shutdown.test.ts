// A clean Ctrl-C tells every client the truth: real `pty-ws start` children, SIGINT, real ws
// clients and the real `pty-ws attach`. A session that ends with the server hears `Closed`
// (`instance_terminated`) first, then `binding_goodbye` `server_shutdown` and close 1000; one that
// survives (tmux) hears only the goodbye.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TestClient, type Frame } from '../helpers/client.ts';
import { endAnyOrphans, expectNoneLeft, killMultiplexers, processesMentioning } from '../helpers/leftovers.ts';
import { runCli, until, type Child } from '../helpers/processes.ts';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Started extends Child {
  dir: string;
  origin: string;
  token: string;
  attachUrl: string;
}

/** `pty-ws start` on a new state dir, up once its banner names the default session's attach URL. */
async function start(): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-shutdown-'));
  const child = runCli(['start', '--port', '0', '--state-dir', dir], { HOME: dir });
  cleanups.push(async () => {
    await child.stop();
    await killMultiplexers(join(dir, 'pty-host.sock'));
    // A router stopped here mid-shutdown (SIGKILL) leaves its PTY host and sessions by design.
    await endAnyOrphans(dir);
    rmSync(dir, { recursive: true, force: true });
  });
  const attachUrl = await until(() => /attach URL:\s+(\S+)/.exec(child.stdout())?.[1] ?? (child.proc.exitCode !== null ? 'exited' : undefined), 'the banner', 60_000);
  if (attachUrl === 'exited') throw new Error(`pty-ws start exited: ${child.stderr()}`);
  const token = /dev token:\s+(\S+)/.exec(child.stdout())![1]!;
  const origin = /listening on (http:\/\/\S+)/.exec(child.stdout())![1]!;
  return { ...child, dir, origin, token, attachUrl };
}

const kinds = (frames: Frame[]) => frames.map((f) => (f.op === 'pty.session_frame' ? String(f.payload.kind) : f.op));

describe('a clean Ctrl-C', { timeout: 90_000 }, () => {
  it('ends native sessions first: their clients hear Closed (instance_terminated), then the goodbye and close 1000', async () => {
    const server = await start();
    const a = await TestClient.connect(server.attachUrl, { token: server.token });
    await a.join({ role: 'controller' });
    const b = await TestClient.connect(server.attachUrl, { token: server.token });
    await b.join({ role: 'observer' });

    server.proc.kill('SIGINT');
    for (const c of [a, b]) {
      expect(await c.waitForClose()).toMatchObject({ code: 1000 });
      const tail = kinds(c.frames()).slice(-2);
      expect(tail).toEqual(['Closed', 'binding_goodbye']);
      const [closed, goodbye] = c.frames().slice(-2);
      expect(closed!.payload).toMatchObject({ kind: 'Closed', reason: 'instance_terminated', exit_code: null });
      expect(goodbye!.payload).toMatchObject({ reason: 'server_shutdown' });
    }
    expect(await server.exited).toBe(0);
  });

  it('leaves a tmux session running: its clients hear only the goodbye', async () => {
    const server = await start();
    const res = await fetch(`${server.origin}/agents/local/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ session_backend: 'tmux', command: 'exec sleep 300' }),
    });
    const { attach_url: url } = (await res.json()) as { attach_url: string };
    const c = await TestClient.connect(url, { token: server.token });
    await c.join({ role: 'controller' });
    const attach = runCli(['attach', url, '--observe', '--label', 'cli-attach'], { PTY_WS_TOKEN: server.token });
    cleanups.push(() => attach.stop());
    // Joined once its join's Keyframe repainted its terminal.
    await until(() => attach.stdout().length > 0, 'the CLI joined', 60_000);

    server.proc.kill('SIGINT');
    expect(await c.waitForClose()).toMatchObject({ code: 1000 });
    expect(kinds(c.frames())).not.toContain('Closed');
    expect(c.frames().at(-1)).toMatchObject({ op: 'binding_goodbye', payload: { reason: 'server_shutdown' } });
    expect(await server.exited).toBe(0);
    // The host stays with its tmux session, which goes on.
    cleanups.push(() => stopHost(server.dir));
    expect(processesMentioning(server.dir).some((p) => p.includes('src/adapter/node/pty-host-main.ts'))).toBe(true);
    // The CLI says so and keeps trying to get back to it.
    await until(() => attach.stdout().includes('[pty-ws: the server shut down; the session is still running, reconnecting…]'), 'the CLI notice').catch((e: unknown) => {
      throw new Error(`${String(e)}: ${JSON.stringify(attach.stdout().slice(-300))} ${attach.stderr()}`);
    });
    expect(attach.proc.exitCode).toBeNull();
  });

  it('pty-ws attach says the server shut down and what became of the session, and exits', async () => {
    const server = await start();
    const attach = runCli(['attach', server.attachUrl, '--label', 'cli-attach'], { PTY_WS_TOKEN: server.token });
    cleanups.push(() => attach.stop());
    await until(() => attach.stdout().length > 0, 'the CLI joined', 60_000);

    server.proc.kill('SIGINT');
    expect(await attach.exited, attach.stderr()).toBe(1);
    expect(attach.stderr()).toContain('[pty-ws: the server shut down; the session ended: instance_terminated (server shutdown)]');
    // The server finishes its own shutdown (the clean-up's SIGTERM would be a second signal:
    // exit at once, leaving the PTY host).
    expect(await server.exited).toBe(0);
    await expectNoneLeft(server.dir);
  });
});

/** The PTY host the router left running for its tmux session, and tmux, ended. */
async function stopHost(dir: string): Promise<void> {
  for (const p of processesMentioning(dir)) if (p.includes('src/adapter/node/pty-host-main.ts')) process.kill(Number(p.split(' ')[0]), 'SIGTERM');
  await killMultiplexers(join(dir, 'pty-host.sock'));
  await expectNoneLeft(dir);
}
