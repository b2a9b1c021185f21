// pty-ws/v1 binding rules (§2–§6, §8.1, §9) against the real server, PTY host and libSQL file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { isUuidV7 } from '../../src/core/ids.ts';
import { b64, TestClient, type Frame } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer({ PTY_WS_PING_INTERVAL_MS: '100', PTY_WS_PONG_TIMEOUT_MS: '500', PTY_WS_MAX_CONTROLLERS: '1' });
  token = server.devToken!;
});
afterAll(async () => {
  await server?.stop();
});

const session = async (body: Record<string, unknown> = {}): Promise<string> => (await server.createSession(body)).attach_url;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const isLogFrame = (f: Frame) => f.op === 'pty.session_frame' && ['Output', 'Resize', 'MembershipChanged', 'Closed'].includes(String(f.payload.kind));

describe('envelope (§3)', () => {
  it('server frames carry fresh UUIDv7 ids, RFC 3339 ts and a sequence; responses echo the request id', async () => {
    const c = await TestClient.connect(await session(), { token });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo env-check\r') });
    await c.waitForOutput('env-check');
    const pingId = 'client-chosen-id-1';
    c.sendRaw(JSON.stringify({ op: 'ping', id: pingId, ts: new Date().toISOString(), payload: {} }));
    await c.waitForFrame((f) => f.op === 'pong' && f.id === pingId, 'pong echoing the id');
    for (const f of c.frames()) {
      expect(f.ts).toMatch(RFC3339);
      expect(Number.isInteger(f.sequence)).toBe(true);
      if (f.op === 'binding_hello' || isLogFrame(f)) expect(isUuidV7(f.id)).toBe(true);
    }
  });

  it('refuses each malformed envelope with INVALID_REQUEST naming the field, and keeps the connection', async () => {
    const c = await TestClient.connect(await session(), { token });
    await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    const ts = new Date().toISOString();
    const cases: Array<[unknown, RegExp]> = [
      [{ op: 'ping', id: 'a1', ts: 'yesterday', payload: {} }, /ts/],
      [{ op: 'ping', id: 'a2', ts }, /payload/],
      [{ op: 7, id: 'a3', ts, payload: {} }, /op/],
      [{ op: 'ping', id: 'a4', ts, payload: [] }, /payload/],
      [{ op: 'ping', id: 'a5', ts, payload: {}, sequence: 9 }, /sequence/],
      [{ op: 'ping', id: 'a6', ts, payload: {}, replay_from: -1 }, /replay_from/],
      [{ op: 'pty.session_resize', id: 'a7', ts, payload: { cols: 0, rows: 10 } }, /cols/],
      [{ op: 'pty.join_session', id: 'a8', ts, payload: { role: 'boss' } }, /role/],
    ];
    for (const [frame] of cases) c.sendRaw(JSON.stringify(frame));
    c.sendRaw(JSON.stringify({ op: 'ping', id: 'x'.repeat(129), ts, payload: {} }));
    await c.waitFor(() => c.frames().filter((f) => f.op === 'Error').length >= cases.length + 1, 'all errors');
    for (const [frame, re] of cases) {
      const id = (frame as { id: string }).id;
      const e = c.frames().find((f) => f.op === 'Error' && f.id === id);
      expect(e?.payload.code, id).toBe('INVALID_REQUEST');
      expect(String(e?.payload.message), id).toMatch(re);
    }
    const anonymous = c.frames().filter((f) => f.op === 'Error' && isUuidV7(f.id));
    expect(anonymous.length).toBe(1);
    const id = c.send('ping');
    await c.waitForFrame((f) => f.op === 'pong' && f.id === id, 'pong');
    expect(c.closed).toBeNull();
  });
});

describe('error mapping (§6)', () => {
  it('every Error frame carries code, message, retryable and a canonical a2a_error', async () => {
    const url = await session();
    await (await TestClient.connect(url, { token })).join({ role: 'controller' });
    const c = await TestClient.connect(url, { token });
    const unknown = c.send('NoSuchOperation');
    const early = c.send('pty.session_input', { data: b64('x') });
    await c.join({ role: 'observer' });
    const denied = c.send('pty.session_resize', { cols: 10, rows: 10 });
    const k1 = c.send('pty.request_keyframe');
    const k2 = c.send('pty.request_keyframe');
    const k3 = c.send('pty.request_keyframe');
    const expectations: Array<[string, string, number, boolean]> = [
      [unknown, 'UNSUPPORTED_OPERATION', -32004, false],
      [early, 'INVALID_REQUEST', -32600, false],
      [denied, 'PERMISSION_DENIED', -32600, false],
      [k3, 'RATE_LIMITED', -32600, true],
    ];
    for (const [id, code, a2a, retryable] of expectations) {
      const e = await c.waitForFrame((f) => f.op === 'Error' && f.id === id, code);
      expect(e.payload).toMatchObject({ code, retryable, a2a_error: { code: a2a, message: e.payload.message } });
      expect((e.payload.a2a_error as { data: unknown[] }).data[0]).toMatchObject({
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: code,
        domain: 'a2a-protocol.org',
      });
    }
    await c.waitForFrame((f) => f.id === k1 && f.payload.kind === 'Keyframe', 'k1');
    await c.waitForFrame((f) => f.id === k2 && f.payload.kind === 'Keyframe', 'k2');
  });
});

describe('subprotocols (docs/protocol.md §1.2)', () => {
  it('refuses a missing header while auth is on, and an unknown one always', async () => {
    const url = await session();
    expect(await TestClient.refusedStatus(url, { token, protocols: [] })).toBe(400);
    expect(await TestClient.refusedStatus(url, { token, protocols: ['pty-ws.v2', 'graphql-ws'] })).toBe(400);
  });

  it('echoes exactly the selected token: binary wins when both are offered', async () => {
    const url = await session();
    const both = await TestClient.connect(url, { token, protocols: ['pty-ws.v1', 'pty-ws.v1.binary'] });
    expect(both.ws.protocol).toBe('pty-ws.v1.binary');
    const json = await TestClient.connect(url, { token, protocols: ['pty-ws.v1'] });
    expect(json.ws.protocol).toBe('pty-ws.v1');
  });

  it('accepts a connection without the header only when auth is off', async () => {
    const open = await startTestServer({ PTY_WS_AUTH: 'off' });
    try {
      const ws = new WebSocket(open.attachUrl(open.defaultSession!.id));
      const hello = await new Promise<Frame>((resolve, reject) => {
        ws.once('message', (d: Buffer) => resolve(JSON.parse(d.toString()) as Frame));
        ws.once('error', reject);
      });
      expect(hello.op).toBe('binding_hello');
      expect(ws.protocol).toBe('');
      ws.close();
    } finally {
      await open.stop();
    }
  });
});

describe('binary and JSON clients on one session (§3.1)', () => {
  it('JSON clients get base64 Output with the same sequence numbers as the PW1O frames', async () => {
    const url = await session();
    const bin = await TestClient.connect(url, { token, protocols: ['pty-ws.v1.binary'] });
    await bin.join({ role: 'controller' });
    const json = await TestClient.connect(url, { token });
    await json.join({ role: 'observer' });
    bin.sendRaw(Buffer.concat([Buffer.from('PW1I'), Buffer.from('for i in 1 2 3; do echo same-$i; done\r')]));
    await json.waitForOutput('same-3');
    await bin.waitForOutput('same-3');
    const jsonOut = json.frames().filter((f) => f.payload.kind === 'Output');
    const binOut = bin.received.flatMap((r) => (r.type === 'binary' ? [{ seq: Number(r.data.readBigUInt64BE(4)), data: r.data.subarray(13) }] : []));
    const common = binOut.filter((b) => b.seq >= jsonOut[0]!.sequence);
    expect(common.length).toBeGreaterThan(0);
    for (const b of common) {
      const j = jsonOut.find((f) => f.sequence === b.seq);
      expect(j, `seq ${b.seq}`).toBeDefined();
      expect(Buffer.from(String(j!.payload.data), 'base64').equals(b.data)).toBe(true);
    }
  });

  it('refuses binary frames on a JSON connection', async () => {
    const c = await TestClient.connect(await session(), { token });
    await c.join({ role: 'controller' });
    c.sendRaw(Buffer.concat([Buffer.from('PW1I'), Buffer.from('echo no\r')]));
    const e = await c.waitForFrame((f) => f.op === 'Error', 'binary on json');
    expect(e.payload.code).toBe('INVALID_REQUEST');
    expect(String(e.payload.message)).toMatch(/pty-ws\.v1\.binary/);
  });
});

describe('keepalive and stale reaping (§2.4)', () => {
  it('reaps a controller that stops answering Pings, releases its role and lets a later controller type', async () => {
    const url = await session();
    const stale = new WebSocket(url, ['pty-ws.v1'], { headers: { authorization: `Bearer ${token}` }, autoPong: false });
    await new Promise((r) => stale.once('open', r));
    const staleClosed = new Promise<{ code: number; reason: string }>((resolve) => stale.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    const staleJoined = new Promise<void>((resolve) =>
      stale.on('message', (d: Buffer) => {
        const f = JSON.parse(d.toString()) as Frame;
        if (f.id === 'stale-join' && f.payload.kind === 'Keyframe') resolve();
      }),
    );
    stale.send(JSON.stringify({ op: 'pty.join_session', id: 'stale-join', ts: new Date().toISOString(), payload: { role: 'controller' } }));
    await staleJoined;
    const watcher = await TestClient.connect(url, { token });
    const flush = await watcher.join({ role: 'controller' });
    expect(flush.find((f) => f.payload.kind === 'RoleAssigned')?.payload).toMatchObject({ role: 'observer', downgraded: true });
    const closed = await staleClosed;
    // A close frame, not a dropped socket (1006).
    expect(closed).toEqual({ code: 1011, reason: expect.stringMatching(/^no Pong within \d+ ms$/) });
    await watcher.waitForFrame((f) => f.payload.kind === 'MembershipChanged' && (f.payload.controllers as unknown[]).length === 0, 'the stale controller released');
    const next = await TestClient.connect(url, { token });
    const role = (await next.join({ role: 'controller' })).find((f) => f.payload.kind === 'RoleAssigned')!;
    expect(role.payload.role).toBe('controller');
    next.send('pty.session_input', { data: b64('echo after-reap\r') });
    await watcher.waitForOutput('after-reap');
    // A client that answers Pings stays, well past the timeout.
    expect(watcher.closed).toBeNull();
  });

  it('answers application-level ping with pong carrying client_ts and server_ts', async () => {
    const c = await TestClient.connect(await session(), { token });
    const id = c.send('ping', { client_ts: '2026-01-01T00:00:00Z' });
    const pong = await c.waitForFrame((f) => f.op === 'pong' && f.id === id, 'pong');
    expect(pong.payload.client_ts).toBe('2026-01-01T00:00:00Z');
    expect(String(pong.payload.server_ts)).toMatch(RFC3339);
  });
});

describe('service parameters (§9)', () => {
  it('caches them from the first frame, replaces them on UpdateServiceParameters, and puts the trace id in logs', async () => {
    const c = await TestClient.connect(await session(), { token });
    c.send('ping', {}, { service_parameters: { trace_id: 'trace-first-frame' } });
    await c.join({ role: 'controller' });
    expect(server.logs.some((l) => l.includes('trace-first-frame') && l.includes('audit.attach'))).toBe(true);
    const id = c.send('UpdateServiceParameters', { service_parameters: { trace_id: 'trace-updated' } });
    await c.waitForFrame((f) => f.op === 'UpdateServiceParameters.Response' && f.id === id, 'update response');
    c.send('pty.request_role', { role: 'observer' });
    await c.waitFor(() => server.logs.some((l) => l.includes('trace-updated') && l.includes('audit.role_change')), 'the new trace id in logs');
  });
});

describe('ordering (§8.1)', () => {
  it('keeps sequence strictly increasing for log frames and never decreasing per connection, with several clients typing and resizing', async () => {
    const url = await session();
    const clients = await Promise.all([0, 1, 2].map(() => TestClient.connect(url, { token })));
    for (const c of clients) await c.join({ role: 'observer' });
    for (const c of clients) {
      const id = c.send('pty.request_role', { role: 'controller' });
      await c.waitForFrame((f) => f.id === id, 'role answer');
    }
    // The first joiner of a fresh session is its controller; max_controllers is 1 here.
    const [controller, ...others] = clients as [TestClient, ...TestClient[]];
    for (let i = 0; i < 30; i++) {
      controller.send('pty.session_input', { data: b64(`echo burst-${i}\r`) });
      controller.send('pty.session_resize', { cols: 60 + (i % 20), rows: 20 + (i % 5) });
      for (const o of others) o.send('ping');
    }
    controller.send('pty.session_input', { data: b64('echo burst-end\r') });
    for (const c of clients) await c.waitForOutput('burst-end');
    for (const c of clients) {
      const all = c.frames().map((f) => f.sequence);
      expect(all).toEqual([...all].sort((a, b) => a - b));
      const logged = c.frames().filter(isLogFrame).map((f) => f.sequence);
      for (let i = 1; i < logged.length; i++) expect(logged[i]!).toBeGreaterThan(logged[i - 1]!);
    }
  });
});
