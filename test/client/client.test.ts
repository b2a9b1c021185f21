// The client library against the real server, PTY host and libSQL file: joining, roles, a network cut
// healed with replay_from, a cut longer than retention healed by a Keyframe, the exit code, and Deno.
import { spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import { SessionsApi } from '../../src/client/sessions-api.ts';
import type { PtyClientOptions } from '../../src/client/types.ts';
import type { WebSocketFactory } from '../../src/client/websocket.ts';
import { ClientProbe, count } from '../helpers/probe.ts';
import { startProxy, type CuttableProxy } from '../helpers/proxy.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { until } from '../helpers/wait.ts';

let server: TestServer | null = null;
let proxy: CuttableProxy | null = null;
const clients: PtyClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await proxy?.close();
  proxy = null;
  await server?.stop();
  server = null;
});

function open(s: TestServer, sessionId: string, opts: Partial<PtyClientOptions> & { via?: CuttableProxy } = {}): ClientProbe {
  const { via, ...rest } = opts;
  const url = via ? `ws://127.0.0.1:${via.port}/agents/local/sessions/${sessionId}/attach` : s.attachUrl(sessionId);
  const client = new PtyClient({ url, token: s.devToken, webSocket: nodeWebSocket(), size: { cols: 80, rows: 24 }, reconnect: { minDelayMs: 50, maxDelayMs: 200 }, ...rest });
  clients.push(client);
  return new ClientProbe(client);
}

/** `ws` sockets whose JSON requests are also recorded in `sent`. */
function spying(sent: Array<{ op: string; replay_from?: number }>): WebSocketFactory {
  const inner = nodeWebSocket();
  return (url, protocols) => {
    const ws = inner(url, protocols);
    const send = ws.send.bind(ws);
    ws.send = (data) => {
      if (typeof data === 'string') sent.push(JSON.parse(data) as { op: string; replay_from?: number });
      send(data);
    };
    return ws;
  };
}

const api = (s: TestServer) => new SessionsApi({ origin: s.origin, instanceId: 'local', token: s.devToken });

/** The last `rows` rows of the visible screen. */
async function viewport(p: ClientProbe): Promise<string[]> {
  await p.screen();
  const buf = p.term.buffer.active;
  return Array.from({ length: p.term.rows }, (_, i) => buf.getLine(buf.baseY + i)?.translateToString(true) ?? '');
}

describe('client library against the server', () => {
  it('joins in binary and JSON mode, shows who is attached, and an observer cannot type', async () => {
    server = await startTestServer();
    const id = server.defaultSession!.id;
    const ctl = open(server, id, { label: 'alice' });
    await ctl.client.connect();
    const obs = open(server, id, { label: 'bob', role: 'observer', binary: false });
    await obs.client.connect();
    expect(ctl.client.role).toBe('controller');
    expect(obs.client.role).toBe('observer');
    await ctl.waitFor(() => ctl.client.membership.observers.length === 1, 'the observer in membership');
    expect(ctl.client.membership.controllers.map((m) => m.label)).toEqual(['alice']);
    expect(ctl.client.membership.observers.map((m) => m.label)).toEqual(['bob']);

    ctl.client.send('echo both-$((20+22))\r');
    await ctl.waitForOutput('both-42');
    await obs.waitForOutput('both-42');
    expect(ctl.frames.some((f) => f.type === 'output')).toBe(true);

    obs.client.send('echo sneaky\r');
    const denied = await obs.waitFor(() => obs.errors.find((e) => e.code === 'PERMISSION_DENIED'), 'PERMISSION_DENIED');
    expect(denied.source).toBe('binding');
    expect(ctl.output()).not.toContain('sneaky');

    const left = await obs.client.leave();
    expect(left.reason).toBe('left');
    await ctl.waitFor(() => ctl.client.membership.observers.length === 0, 'the observer gone from membership');
  });

  it('heals a network cut with replay_from: output printed meanwhile arrives exactly once', async () => {
    server = await startTestServer();
    proxy = await startProxy(server.port);
    const id = server.defaultSession!.id;
    const sent: Array<{ op: string; replay_from?: number }> = [];
    const far = open(server, id, { via: proxy, label: 'far', webSocket: spying(sent) });
    await far.client.connect();
    const near = open(server, id, { label: 'near' });
    await near.client.connect();
    far.client.send('echo before-$((1+1))\r');
    await near.waitForOutput('before-2');
    await far.waitForOutput('before-2');

    proxy.cut({ refuse: true });
    await far.waitForState('reconnecting');
    const cursorAtCut = far.client.cursor.position;
    near.client.send('echo during-$((2*21))\r');
    await near.waitForOutput('during-42');
    far.client.send('echo typed-while-cut-$((3*3))\r');
    proxy.restore();

    await far.waitForOutput('typed-while-cut-9');
    expect(count(far.output(), 'during-42')).toBe(1);
    expect(count(far.output(), 'before-2')).toBe(1);
    expect(far.client.state).toBe('live');
    expect(far.keyframes.at(-1)!.repaint).toBe(false);
    const joins = sent.filter((f) => f.op === 'pty.join_session');
    expect(joins.map((f) => f.replay_from)).toEqual([undefined, cursorAtCut]);

    await near.waitForOutput('typed-while-cut-9');
    expect(await viewport(far)).toEqual(await viewport(near));
  });

  it('after a cut longer than retention, REPLAY_OUT_OF_RANGE and a repainting Keyframe give the right screen', async () => {
    server = await startTestServer({}, {}, { belowSpecRetention: { frames: 1, seconds: 1 } });
    proxy = await startProxy(server.port);
    const id = server.defaultSession!.id;
    const far = open(server, id, { via: proxy });
    await far.client.connect();
    const near = open(server, id);
    await near.client.connect();

    proxy.cut({ refuse: true });
    await far.waitForState('reconnecting');
    near.client.send('for i in $(seq 1 60); do echo line-$i; sleep 0.04; done; echo done-$((5*5))\r');
    await near.waitForOutput('done-25', 15_000);
    proxy.restore();

    await far.waitFor(() => far.errors.find((e) => e.code === 'REPLAY_OUT_OF_RANGE'), 'REPLAY_OUT_OF_RANGE', 15_000);
    await far.waitFor(() => far.client.state === 'live', 'live again');
    expect(far.keyframes.at(-1)!.repaint).toBe(true);
    expect(far.output()).not.toContain('line-1\r\n');
    expect(await viewport(far)).toEqual(await viewport(near));
    expect((await viewport(far)).join('\n')).toContain('done-25');
  });

  it('closed while its socket is still connecting, ends quietly (Ctrl-] d before the server answered)', async () => {
    // A server that accepts the TCP connection and never answers the upgrade.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const crashes: unknown[] = [];
    const onCrash = (e: unknown): void => void crashes.push(e);
    process.on('uncaughtException', onCrash);
    try {
      const client = new PtyClient({ url: `ws://127.0.0.1:${port}/agents/local/sessions/x/attach`, token: 't', webSocket: nodeWebSocket(), size: { cols: 80, rows: 24 } });
      const connecting = client.connect().catch((e: unknown) => e);
      await until(() => sockets.length > 0, 'the TCP connection');
      client.close();
      expect(await client.whenEnded()).toMatchObject({ reason: 'client_closed' });
      await connecting;
      await new Promise((r) => setTimeout(r, 100));
      expect(crashes).toEqual([]);
    } finally {
      process.off('uncaughtException', onCrash);
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it('ends with the exit code of the session process, from Closed', async () => {
    server = await startTestServer();
    const s = await api(server).create({ command: 'sleep 0.3; exit 7' });
    const p = open(server, s.session_id);
    await p.client.connect();
    const end = await p.client.whenEnded();
    expect(end).toMatchObject({ reason: 'session_closed', closed: { exitCode: 7, reason: 'normal' } });
  });

  it('is refused without retrying when the token is wrong', async () => {
    server = await startTestServer();
    const p = open(server, server.defaultSession!.id, { token: 'not-the-token' });
    await expect(p.client.connect()).rejects.toThrow(/401/);
    expect(p.end).toMatchObject({ reason: 'refused' });
    expect(p.states.filter((st) => st === 'reconnecting')).toEqual([]);
  });

  it('runs unchanged on Deno with its own WebSocket and fetch', async () => {
    server = await startTestServer();
    const deno = new URL('../../node_modules/.bin/deno', import.meta.url).pathname;
    const script = new URL('../fixtures/deno-client.ts', import.meta.url).pathname;
    const config = new URL('../../deno.json', import.meta.url).pathname;
    const child = spawn(deno, ['run', '--allow-net', '--config', config, script, server.origin, server.devToken!], { env: { PATH: process.env.PATH, HOME: server.dir, DENO_NO_UPDATE_CHECK: '1' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, err).toBe(0);
    expect(JSON.parse(out)).toEqual({ ok: true, role: 'controller', end: 'left', sessions: 2 });
  });
});
