// tmux/managed and screen/managed end to end: real router, real PTY host, real tmux and screen,
// real ws clients. Sessions that outlive their clients, their PTY host and their router.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run } from '../../pty/backends/exec.ts';
import { muxPaths } from '../../pty/backends/paths.ts';
import { isAlive } from '../../pty/backends/process-tree.ts';
import { SessionsApi } from '../../src/client/sessions-api.ts';
import { b64, TestClient, type Frame } from '../helpers/client.ts';
import { expectNoneLeft } from '../helpers/leftovers.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer, stopWithMultiplexers, type TestServer } from '../helpers/server.ts';

const WAIT = { timeout: 10_000, interval: 50 };
let server: TestServer;
let rest: Rest;

beforeAll(async () => {
  server = await startTestServer({}, {}, { overrides: { ptyHostLossGraceMs: 20_000 } });
  rest = new Rest(server.origin, server.devToken);
});

afterAll(async () => {
  if (server) await stopWithMultiplexers(server);
});

async function joined(url: string, payload: Record<string, unknown> = { role: 'controller' }, extra: Record<string, unknown> = {}): Promise<{ c: TestClient; frames: Frame[] }> {
  const c = await TestClient.connect(url, { token: server.devToken });
  const frames = await c.join(payload, extra);
  return { c, frames };
}

/**
 * Waits for text on a client's terminal: in the Output it got, or in its Keyframe (what a
 * session printed before the join finished, e.g. its first prompt, arrives in the Keyframe).
 */
function waitForText(c: TestClient, text: string, timeoutMs?: number): Promise<unknown> {
  return c.waitFor(() => c.screen().includes(text) || c.output().includes(text), `${JSON.stringify(text)} on the screen`, timeoutMs);
}

/** A client's replay cursor: the highest sequence it has seen. */
function lastLogSequence(c: TestClient): number {
  return Math.max(0, ...c.frames().map((f) => f.sequence));
}

describe('session host selection', () => {
  it('binding_hello advertises the multiplexers installed here, never zellij', async () => {
    const c = await TestClient.connect(server.attachUrl(server.defaultSession!.id), { token: server.devToken });
    const hello = await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    expect(hello.payload.session_host).toEqual({
      supported_backends: ['native', 'tmux', 'screen'],
      default_backend: 'native',
      supported_classes: ['direct', 'managed'],
      default_class: 'direct',
      observe_supported: true,
      drive_supported: true,
      reattach_supported: true,
    });
    c.close();
  });

  it.each([
    [{ session_backend: 'zellij' }, 'session_backend.not_implemented'],
    [{ session_backend: 'tmux', session_class: 'direct' }, 'session_class.not_implemented'],
    [{ session_backend: 'screen', session_class: 'direct' }, 'session_class.not_implemented'],
    [{ session_backend: 'native', session_class: 'managed' }, 'session_class.not_implemented'],
  ])('REST refuses %j with %s', async (body, code) => {
    const r = await rest.request('POST', '', body);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { code } });
  });

  it('a join refuses an unsupported pair before any role; the session stays startable', async () => {
    const s = await rest.create({ session_backend: 'tmux' });
    const c = await TestClient.connect(s.attach_url, { token: server.devToken });
    await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    const bad = [
      [{ role: 'controller', session_backend: 'zellij' }, 'UNSUPPORTED_OPERATION', 'session_backend.not_implemented'],
      [{ role: 'controller', session_class: 'direct' }, 'UNSUPPORTED_OPERATION', 'session_class.not_implemented'],
    ] as const;
    for (const [payload, code, reason] of bad) await expectRefusal(c, payload, code, reason);
    expect(c.frames().some((f) => f.payload.kind === 'RoleAssigned')).toBe(false);
    await c.join({ role: 'controller', command: 'echo started-$((6*7)); sleep 30' });
    await waitForText(c, 'started-42');
    expect((await rest.get(s.session_id)).state).toBe('running');
    expect(await rest.delete(s.session_id)).toBe(202);
    await c.waitForClose();
  });

  it.each([
    [{ argv: ['/no/such/program'] }, 'spawn.not_found', 'program not found or not executable: /no/such/program'],
    [{ cwd: '/no/such/dir' }, 'spawn.bad_cwd', 'working directory does not exist: /no/such/dir'],
  ])('a process that cannot start (%j) refuses the join naming %s and ends the session with Closed(error); the host keeps serving', async (fields, reason, detail) => {
    const s = await rest.create({ session_backend: 'tmux', ...fields });
    const c = await TestClient.connect(s.attach_url, { token: server.devToken });
    await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    await expectRefusal(c, { role: 'controller' }, 'INVALID_REQUEST', reason);
    await vi.waitFor(async () => expect(await rest.get(s.session_id)).toMatchObject({ state: 'closed', close_reason: 'error' }), WAIT);
    // Whoever joins next reads why it ended, and nothing is started again.
    const late = await TestClient.connect(s.attach_url, { token: server.devToken });
    late.send('pty.join_session', { role: 'observer' }, { replay_from: 0 });
    const closed = await late.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed');
    expect(closed.payload).toMatchObject({ kind: 'Closed', reason: 'error', exit_code: null });
    expect(String(closed.payload.detail)).toContain(detail);
    await late.waitForFrame((f) => f.op === 'binding_goodbye', 'goodbye');
    c.close();
    const good = await rest.create({ session_backend: 'tmux', command: 'echo fine-$((6*7)); sleep 30' });
    const g = await joined(good.attach_url);
    await waitForText(g.c, 'fine-42');
    expect(await rest.delete(good.session_id)).toBe(202);
    await g.c.waitForClose();
  });
});

async function expectRefusal(c: TestClient, payload: Record<string, unknown>, code: string, reason: string): Promise<void> {
  const id = c.send('pty.join_session', payload);
  const err = await c.waitForFrame((f) => f.id === id && f.op === 'Error', `refusal of ${JSON.stringify(payload)}`);
  expect(err.payload).toMatchObject({ code });
  expect((err.payload.a2a_error as { data: Array<{ metadata: Record<string, string> }> }).data[0]!.metadata.reason).toBe(reason);
}

describe.each(['tmux', 'screen'])('%s/managed sessions', (backend) => {
  it('create, attach, type, detach everyone, reattach and see the screen; delete kills it all', async () => {
    const s = await rest.create({ session_backend: backend, command: 'PS1="mux$ " exec /bin/sh', terminal_size: { cols: 90, rows: 25 } });
    expect(s).toMatchObject({ session_backend: backend, session_class: 'managed' });
    const a = await joined(s.attach_url);
    await waitForText(a.c, 'mux$');
    a.c.send('pty.session_input', { data: b64('echo typed-$((6*7))\r') });
    await a.c.waitForOutput('typed-42');
    const observer = await joined(s.attach_url, { role: 'observer' });
    a.c.close();
    observer.c.close();
    await vi.waitFor(async () => expect((await rest.get(s.session_id)).state).toBe('running'), WAIT);

    const back = await joined(s.attach_url);
    const key = back.frames.find((f) => f.payload.kind === 'Keyframe')!;
    expect(key.payload).toMatchObject({ snapshot_cols: 90, snapshot_rows: 25 });
    expect(back.c.screen()).toContain('typed-42');
    back.c.send('pty.session_input', { data: b64('echo again-$((7*7))\r') });
    await back.c.waitForOutput('again-49');

    expect(await rest.delete(s.session_id)).toBe(202);
    const closed = await back.c.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed');
    expect(closed.payload).toMatchObject({ reason: 'killed' });
    await back.c.waitForClose();
    // Its processes, and the multiplexer's session (and server: the session was its only one).
    await expectNoneLeft(s.session_id);
    const paths = muxPaths(server.config.ptySocket);
    const env = { PATH: process.env.PATH ?? '', SCREENDIR: paths.screenDir };
    const probe = backend === 'tmux' ? ['tmux', '-S', paths.tmuxSocket, 'has-session', '-t', `=pw-${s.session_id}`] : ['screen', '-S', `pw-${s.session_id}`, '-Q', 'info'];
    expect((await run('/usr/bin/env', probe, env)).code).not.toBe(0);
  });
});

describe('PTY host restart', () => {
  it('tmux sessions survive it; native ones end with Closed error; attached clients hear an Error', async () => {
    const tmux = await rest.create({ session_backend: 'tmux', command: 'PS1="mux$ " exec /bin/sh' });
    const native = await rest.create({ command: 'PS1="nat$ " exec /bin/sh' });
    const t = await joined(tmux.attach_url);
    const n = await joined(native.attach_url);
    await waitForText(t.c, 'mux$');
    await waitForText(n.c, 'nat$');
    t.c.send('pty.session_input', { data: b64('echo before-restart\r') });
    await t.c.waitForOutput('before-restart');
    const firstHost = server.ptyHostPid()!;

    process.kill(firstHost, 'SIGKILL');

    for (const c of [t.c, n.c]) {
      const err = await c.waitForFrame((f) => f.op === 'Error', 'the host-loss Error');
      expect(err.payload).toMatchObject({ code: 'INTERNAL', message: expect.stringContaining('PTY host') });
    }
    // Until a host is back (starting one takes a while), REST does not vouch for the process.
    expect(await rest.get(tmux.session_id)).toMatchObject({ state: 'running', pty_host: 'unreachable' });
    // The client library reads it too (its SessionInfo schema once stripped the field).
    const api = new SessionsApi({ origin: server.origin, instanceId: 'local', token: server.devToken });
    expect(await api.get(tmux.session_id)).toMatchObject({ state: 'running', pty_host: 'unreachable' });
    const closed = await n.c.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed for the native session', 20_000);
    expect(closed.payload).toMatchObject({ reason: 'error', detail: expect.stringContaining('PTY host') });
    await n.c.waitForClose();
    await vi.waitFor(() => expect(server.ptyHostPid()).not.toBe(firstHost), WAIT);
    expect(server.ptyHostPid()).not.toBeNull();

    // The tmux session goes on: the new host attached to it again.
    await vi.waitFor(() => {
      t.c.send('pty.session_input', { data: b64('echo after-$((40+2))\r') });
      expect(t.c.output()).toContain('after-42');
    }, { timeout: 20_000, interval: 1000 });
    expect(t.c.closed).toBeNull();
    expect(await rest.get(tmux.session_id)).not.toHaveProperty('pty_host');
    expect(await rest.get(tmux.session_id)).toMatchObject({ state: 'running' });
    expect(await rest.get(native.session_id)).toMatchObject({ state: 'closed', close_reason: 'error' });
    const seqs = t.c.frames().filter((f) => f.payload.kind === 'Output').map((f) => f.sequence);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    t.c.close();
  });
});

describe('router restart', () => {
  it('a router shutting down leaves a host that runs multiplexer sessions; the next one re-adopts them with their screen and log', async () => {
    const s = await rest.create({ session_backend: 'tmux', command: 'PS1="mux$ " exec /bin/sh' });
    const a = await joined(s.attach_url);
    await waitForText(a.c, 'mux$');
    a.c.send('pty.session_input', { data: b64('echo before-router-restart\r') });
    await a.c.waitForOutput('before-router-restart');
    const seen = lastLogSequence(a.c);
    const hostPid = server.ptyHostPid()!;
    const { dir, config } = server;

    await server.stop({ keepDir: true });
    expect(isAlive(hostPid)).toBe(true);
    server = await startTestServer({}, {}, { dir, overrides: { ptyHostLossGraceMs: config.ptyHostLossGraceMs } });
    rest = new Rest(server.origin, server.devToken);
    expect(server.ptyHostPid()).toBe(hostPid);
    expect(await rest.get(s.session_id)).toMatchObject({ state: 'running' });

    const b = await joined(server.attachUrl(s.session_id), { role: 'controller' }, { replay_from: seen });
    const replayed = b.frames.filter((f) => f.op === 'pty.session_frame' && f.payload.kind !== 'RoleAssigned' && f.payload.kind !== 'Keyframe');
    expect(replayed[0]!.sequence).toBe(seen + 1);
    expect(b.c.screen()).toContain('before-router-restart');
    b.c.send('pty.session_input', { data: b64('echo after-router-restart\r') });
    await b.c.waitForOutput('after-router-restart');
    const live = b.c.frames().filter((f) => f.payload.kind === 'Output');
    expect(Math.min(...live.map((f) => f.sequence))).toBeGreaterThan(seen);
    expect(await rest.delete(s.session_id)).toBe(202);
    await b.c.waitForClose();
  });
  it('a session is fresh only if it never had a member: after a restart the first rejoiner gets the role it asks for', async () => {
    const joinedBefore = await rest.create({ session_backend: 'tmux', command: 'PS1="mux$ " exec /bin/sh' });
    const neverJoined = await rest.create({ session_backend: 'tmux', command: 'PS1="mux$ " exec /bin/sh' });
    const a = await joined(joinedBefore.attach_url);
    await waitForText(a.c, 'mux$');
    a.c.close();
    const { dir, config } = server;
    await server.stop({ keepDir: true });
    server = await startTestServer({}, {}, { dir, overrides: { ptyHostLossGraceMs: config.ptyHostLossGraceMs } });
    rest = new Rest(server.origin, server.devToken);

    // `pty-ws attach --observe` reconnecting first: it had a controller before, so it stays an observer.
    const watcher = await joined(server.attachUrl(joinedBefore.session_id), { role: 'observer' });
    expect(watcher.frames.find((f) => f.payload.kind === 'RoleAssigned')!.payload).toMatchObject({ role: 'observer' });
    watcher.c.send('pty.session_input', { data: b64('echo typed-by-an-observer\r') });
    expect((await watcher.c.waitForFrame((f) => f.op === 'Error', 'the refusal')).payload).toMatchObject({ code: 'PERMISSION_DENIED' });
    watcher.c.close();
    // Never joined: its first joiner is controller whatever it asked (pty-extensions §3).
    const first = await joined(server.attachUrl(neverJoined.session_id), { role: 'observer' });
    expect(first.frames.find((f) => f.payload.kind === 'RoleAssigned')!.payload).toMatchObject({ role: 'controller' });
    first.c.close();
    for (const s of [joinedBefore, neverJoined]) expect(await rest.delete(s.session_id)).toBe(202);
  });
});
