// End to end: real router, real PTY host, real shell, real libSQL file, real ws client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64, binaryEcho, TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let url: string;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  url = server.attachUrl(server.defaultSession!.id);
  token = server.devToken!;
});
afterAll(async () => {
  await server?.stop();
});

const createSession = (body: Record<string, unknown> = {}) => server.createSession(body);

describe('attach to a real shell', () => {
  it('sends binding_hello first, then answers a join and runs typed input in the shell', async () => {
    const c = await TestClient.connect(url, { token });
    expect(c.ws.protocol).toBe('pty-ws.v1');
    const hello = await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    expect(c.frames()[0]!.op).toBe('binding_hello');
    expect(hello.payload).toMatchObject({
      binding_uri: 'https://agentic-sandbox.aiwg.io/bindings/pty-ws/v1',
      binding_version: '1.0.0',
      activated_extensions: ['https://agentic-sandbox.aiwg.io/extensions/pty-extensions/v1'],
      session: { session_id: server.defaultSession!.id, current_sequence: 0 },
      session_host: { supported_backends: expect.arrayContaining(['native']), default_backend: 'native', default_class: 'direct' },
      payload_mode: { binary: false, binary_subprotocol: 'pty-ws.v1.binary', json_subprotocol: 'pty-ws.v1' },
    });

    const frames = await c.join({ role: 'controller', cols: 100, rows: 30, client_label: 'test' });
    const kinds = frames.filter((f) => f.op === 'pty.session_frame').map((f) => f.payload.kind);
    expect(kinds.slice(0, 3)).toEqual(['RoleAssigned', 'MembershipChanged', 'Keyframe']);
    const role = frames.find((f) => f.payload.kind === 'RoleAssigned')!;
    expect(role.payload).toMatchObject({ role: 'controller' });
    const membership = frames.find((f) => f.payload.kind === 'MembershipChanged')!;
    expect(membership.payload.controllers).toEqual([{ client_id: role.payload.client_id, label: 'test' }]);

    c.send('pty.session_input', { data: b64('echo hi-$((40+2))\r') });
    await c.waitForOutput('hi-42');

    const logged = c.frames().filter((f) => f.op === 'pty.session_frame' && ['Output', 'MembershipChanged', 'Resize'].includes(String(f.payload.kind)));
    const seqs = logged.map((f) => f.sequence);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    c.close();
  });

  it('applies a resize to the PTY and broadcasts Resize', async () => {
    const s = await createSession();
    const a = await TestClient.connect(s.attach_url, { token });
    await a.join({ role: 'controller' });
    const b = await TestClient.connect(s.attach_url, { token });
    await b.join({ role: 'observer' });
    a.send('pty.session_resize', { cols: 91, rows: 27 });
    await b.waitForFrame((f) => f.payload.kind === 'Resize' && f.payload.cols === 91 && f.payload.rows === 27, 'Resize on the observer');
    a.send('pty.session_input', { data: b64('stty size\r') });
    await a.waitForOutput('27 91');
    await b.waitForOutput('27 91');
    a.close();
    b.close();
  });

  it('ends with Closed carrying the exit code, then binding_goodbye and close 1000', async () => {
    const s = await createSession({ command: 'sleep 0.3; exit 7' });
    const c = await TestClient.connect(s.attach_url, { token });
    await c.join({ role: 'controller' });
    const closed = await c.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed');
    expect(closed.payload).toMatchObject({ exit_code: 7, reason: 'normal' });
    const bye = await c.waitForFrame((f) => f.op === 'binding_goodbye', 'goodbye');
    expect(bye.sequence).toBeGreaterThanOrEqual(closed.sequence);
    expect((await c.waitForClose()).code).toBe(1000);
    const res = await fetch(`${server.origin}/agents/local/sessions/${s.session_id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(await res.json()).toMatchObject({ state: 'closed', exit_code: 7, close_reason: 'normal' });
  });

  it('runs argv exactly and reports an impossible argv as a clear error, keeping the connection', async () => {
    const bad = await createSession({ argv: ['/definitely/not/a/program'] });
    const c = await TestClient.connect(bad.attach_url, { token });
    const id = c.send('pty.join_session', { role: 'controller' });
    const err = await c.waitForFrame((f) => f.op === 'Error' && f.id === id, 'join error');
    expect(err.payload).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect(String(err.payload.message)).toContain('/definitely/not/a/program');
    const pingId = c.send('ping', { client_ts: 'x' });
    await c.waitForFrame((f) => f.op === 'pong' && f.id === pingId, 'pong after a failed join');
    c.close();

    const good = await createSession({ argv: ['/bin/echo', 'argv-exact', '$HOME'] });
    const d = await TestClient.connect(good.attach_url, { token });
    await d.join({ role: 'controller' }, { replay_from: 0 });
    await d.waitFor(() => d.screen().includes('argv-exact $HOME') || d.output().includes('argv-exact $HOME'), 'the exact argv output');
    await d.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed');

    // A later reconnect that missed everything gets every log frame back with replay_from 0.
    const late = await TestClient.connect(good.attach_url, { token });
    const lateId = late.send('pty.join_session', { role: 'observer' }, { replay_from: 0 });
    await late.waitForClose();
    const seen = late.frames();
    expect(seen.find((f) => f.id === lateId && f.payload.kind === 'RoleAssigned')?.payload.role).toBe('observer');
    expect(late.output()).toContain('argv-exact $HOME');
    expect(seen.find((f) => f.payload.kind === 'Closed')?.payload).toMatchObject({ exit_code: 0, reason: 'normal' });
    expect(seen.find((f) => f.payload.kind === 'Keyframe' && f.id === lateId)).toBeDefined();
    expect(seen.at(-1)?.op).toBe('binding_goodbye');
  });
});

describe('binary mode (pty-ws.v1.binary)', () => {
  it('delivers live output as PW1O frames numbered from the session counter and accepts PW1I input', async () => {
    const s = await createSession();
    const { client: c, hello, pw1o: bins } = await binaryEcho(s.attach_url, token);
    expect(c.ws.protocol).toBe('pty-ws.v1.binary');
    expect(hello.payload.payload_mode).toMatchObject({ binary: true });
    expect(bins.length).toBeGreaterThan(0);
    for (const b of bins) {
      expect(b.subarray(0, 4).toString()).toBe('PW1O');
      expect(b[12]).toBe(1);
    }
    expect(c.frames().some((f) => f.payload.kind === 'Output')).toBe(false);
    const seqs = c.received.map((r) => (r.type === 'binary' ? Number(r.data.readBigUInt64BE(4)) : r.frame.sequence));
    const logSeqs = seqs.filter((_, i) => c.received[i]!.type === 'binary');
    expect(logSeqs).toEqual([...logSeqs].sort((a, b) => a - b));
    expect(new Set(logSeqs).size).toBe(logSeqs.length);

    c.sendRaw(Buffer.from('XXXXnope'));
    await c.waitForFrame((f) => f.op === 'Error' && /PW1I/.test(String(f.payload.message)), 'bad magic error');
    expect(c.closed).toBeNull();
    c.close();
  });

  it('refuses PW1I input from an observer', async () => {
    const s = await createSession();
    const ctl = await TestClient.connect(s.attach_url, { token, protocols: ['pty-ws.v1.binary'] });
    await ctl.join({ role: 'controller' });
    const obs = await TestClient.connect(s.attach_url, { token, protocols: ['pty-ws.v1.binary'] });
    await obs.join({ role: 'observer' });
    obs.sendRaw(Buffer.concat([Buffer.from('PW1I'), Buffer.from('echo sneaky\r')]));
    const e = await obs.waitForFrame((f) => f.op === 'Error', 'denied');
    expect(e.payload.code).toBe('PERMISSION_DENIED');
    ctl.close();
    obs.close();
  });
});

describe('bad input never hurts the connection or the server', () => {
  it('answers malformed JSON, a non-object, a missing id and a client sequence with INVALID_REQUEST', async () => {
    const c = await TestClient.connect(url, { token });
    await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    c.sendRaw('{not json');
    c.sendRaw('[1,2]');
    c.sendRaw(JSON.stringify({ op: 'ping', ts: 'now', payload: {} }));
    c.sendRaw(JSON.stringify({ op: 'ping', id: 'with-seq', ts: new Date().toISOString(), sequence: 3, payload: {} }));
    await c.waitFor(() => c.frames().filter((f) => f.op === 'Error').length >= 4, 'four errors');
    const errors = c.frames().filter((f) => f.op === 'Error');
    for (const e of errors) {
      expect(e.payload).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
      expect(e.payload.a2a_error).toMatchObject({ code: -32600, data: [{ reason: 'INVALID_REQUEST', domain: 'a2a-protocol.org' }] });
    }
    expect(errors.find((e) => e.id === 'with-seq')?.payload.message).toMatch(/sequence/);
    const pingId = c.send('ping');
    await c.waitForFrame((f) => f.op === 'pong' && f.id === pingId, 'pong');
    expect(c.closed).toBeNull();
    c.close();
  });

  it('answers an unknown op with UNSUPPORTED_OPERATION echoing the request id', async () => {
    const c = await TestClient.connect(url, { token });
    const id = c.send('pty.fly_to_the_moon', {});
    const e = await c.waitForFrame((f) => f.op === 'Error' && f.id === id, 'unsupported');
    expect(e.payload).toMatchObject({ code: 'UNSUPPORTED_OPERATION', a2a_error: { code: -32004 } });
    expect(c.closed).toBeNull();
    c.close();
  });

  it('rejects input before join and from observers, and bad base64', async () => {
    const s = await createSession();
    const ctl = await TestClient.connect(s.attach_url, { token });
    const early = ctl.send('pty.session_input', { data: b64('x') });
    await ctl.waitForFrame((f) => f.op === 'Error' && f.id === early, 'input before join');
    await ctl.join({ role: 'controller' });
    const badB64 = ctl.send('pty.session_input', { data: 'not base64!' });
    expect((await ctl.waitForFrame((f) => f.op === 'Error' && f.id === badB64, 'bad base64')).payload.code).toBe('INVALID_REQUEST');

    const obs = await TestClient.connect(s.attach_url, { token });
    await obs.join({ role: 'observer' });
    const denied = obs.send('pty.session_input', { data: b64('echo nope\r') });
    expect((await obs.waitForFrame((f) => f.op === 'Error' && f.id === denied, 'denied')).payload.code).toBe('PERMISSION_DENIED');
    const deniedResize = obs.send('pty.session_resize', { cols: 10, rows: 10 });
    expect((await obs.waitForFrame((f) => f.op === 'Error' && f.id === deniedResize, 'denied resize')).payload.code).toBe('PERMISSION_DENIED');
    expect(obs.closed).toBeNull();
    ctl.close();
    obs.close();
  });

  it('closes a connection that sends a frame over the size limit with 1009, and others keep working', async () => {
    const s = await createSession();
    const big = await TestClient.connect(s.attach_url, { token });
    const other = await TestClient.connect(s.attach_url, { token });
    await other.join({ role: 'controller' });
    big.sendRaw('x'.repeat(2 * 1024 * 1024));
    expect((await big.waitForClose()).code).toBe(1009);
    other.send('pty.session_input', { data: b64('echo still-alive\r') });
    await other.waitForOutput('still-alive');
    other.close();
  });

  it('rejects a frame naming another session', async () => {
    const c = await TestClient.connect(url, { token });
    const id = c.send('pty.request_keyframe', { session_id: '01900000-0000-7000-8000-000000000000' });
    expect((await c.waitForFrame((f) => f.op === 'Error' && f.id === id, 'cross-session')).payload.code).toBe('INVALID_REQUEST');
    c.close();
  });
});

describe('the upgrade', () => {
  it('is 404 for an unknown session, before upgrading', async () => {
    expect(await TestClient.refusedStatus(server.attachUrl('01900000-0000-7000-8000-000000000000'), { token })).toBe(404);
  });

  it('is 401 without a valid bearer and 400 for a token in the query or a header without a PTY token', async () => {
    expect(await TestClient.refusedStatus(url)).toBe(401);
    expect(await TestClient.refusedStatus(url, { token: 'wrong' })).toBe(401);
    expect(await TestClient.refusedStatus(`${url}?token=${token}`, { token })).toBe(400);
    expect(await TestClient.refusedStatus(url, { token, protocols: ['chat'] })).toBe(400);
  });

  it('accepts the bearer.<base64url> subprotocol entry and never echoes it', async () => {
    const entry = `bearer.${Buffer.from(token).toString('base64url')}`;
    const c = await TestClient.connect(url, { protocols: [entry, 'pty-ws.v1'] });
    expect(c.ws.protocol).toBe('pty-ws.v1');
    await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    c.close();
  });
});

describe('REST and AgentCard', () => {
  it('serves healthz and an AgentCard with supportedInterfaces, bindings[] and the extension params', async () => {
    expect(await (await fetch(`${server.origin}/healthz`)).json()).toEqual({ status: 'ok' });
    const card = (await (await fetch(`${server.origin}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      name: 'pty-ws',
      supportedInterfaces: [
        { protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        { protocolBinding: 'https://agentic-sandbox.aiwg.io/bindings/pty-ws/v1', protocolVersion: '1.0' },
      ],
      bindings: [{ uri: 'https://agentic-sandbox.aiwg.io/bindings/pty-ws/v1', preference: 'secondary' }],
      capabilities: { extensions: [{ uri: 'https://agentic-sandbox.aiwg.io/extensions/pty-extensions/v1', required: false, params: { max_controllers: 4, max_observers: 32 } }] },
    });
    expect(String((card.bindings as Array<{ notes: string }>)[0]!.notes)).toContain('ListTasks');
  });

  it('creates, lists and shows sessions, and refuses unsupported backends with the spec codes', async () => {
    const s = await createSession({ label: 'rest', terminal_size: { cols: 80, rows: 24 } });
    const auth = { authorization: `Bearer ${token}` };
    const list = (await (await fetch(`${server.origin}/agents/local/sessions`, { headers: auth })).json()) as { sessions: Array<{ session_id: string }> };
    expect(list.sessions.map((x) => x.session_id)).toContain(s.session_id);
    const one = await (await fetch(`${server.origin}/agents/local/sessions/${s.session_id}`, { headers: auth })).json();
    expect(one).toMatchObject({ session_id: s.session_id, state: 'created', current_sequence: 0, terminal_size: { cols: 80, rows: 24 }, membership: { controllers: [], observers: [] } });

    const bad = await fetch(`${server.origin}/agents/local/sessions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ session_backend: 'kubernetes' }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'session_backend.not_implemented' } });
    const badClass = await fetch(`${server.origin}/agents/local/sessions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ session_class: 'managed' }) });
    expect(await badClass.json()).toMatchObject({ error: { code: 'session_class.not_implemented' } });

    // REST error codes are one letter case: lower snake_case, a reason's dots included.
    const codes = await Promise.all(
      [
        fetch(`${server.origin}/agents/local/sessions`),
        fetch(`${server.origin}/agents/local/sessions/not-a-session`, { headers: auth }),
        fetch(`${server.origin}/agents/local/sessions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"label": 5}' }),
        fetch(`${server.origin}/agents/local/sessions/${s.session_id}/attach`, { headers: auth }),
        fetch(`${server.origin}/metrics`),
        fetch(`${server.origin}/agents/local/sessions?token=${token}`, { headers: auth }),
      ].map(async (r) => ((await (await r).json()) as { error: { code: string } }).error.code),
    );
    expect(codes).toEqual(['unauthenticated', 'not_found', 'invalid_request', 'upgrade_required', 'unauthenticated', 'invalid_request']);

    // A body past 1 MiB is refused as it arrives, sent whole or in chunks without a length: a
    // stored record is read back by every list and every creation's count.
    const post = (body: BodyInit, path = '') => fetch(`${server.origin}/agents/local/sessions${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
    // The server stops reading there: the client sees the 400, or (still sending) the socket closed.
    const refused = async (sent: Promise<Response>): Promise<string> => {
      const res = await sent.catch((e: unknown) => ((e as { cause?: { code?: string } }).cause?.code === 'UND_ERR_SOCKET' ? null : Promise.reject(e)));
      if (!res) return 'closed';
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/larger than 1048576 bytes/);
      return 'refused';
    };
    const count = async () => ((await (await fetch(`${server.origin}/agents/local/sessions`, { headers: auth })).json()) as { sessions: unknown[] }).sessions.length;
    const shares = async () => ((await (await fetch(`${server.origin}/agents/local/sessions/${s.session_id}/shares`, { headers: auth })).json()) as { shares: unknown[] }).shares.length;
    const [sessionsBefore, sharesBefore] = [await count(), await shares()];
    const huge = JSON.stringify({ env: { BIG: 'x'.repeat(2 * 1024 * 1024) } });
    for (const body of [huge, new Blob([huge]).stream()]) expect(['refused', 'closed']).toContain(await refused(post(body)));
    expect(['refused', 'closed']).toContain(await refused(post(JSON.stringify({ label: 'x'.repeat(2 * 1024 * 1024) }), `/${s.session_id}/shares`)));
    expect([await count(), await shares()]).toEqual([sessionsBefore, sharesBefore]);
    expect((await post(JSON.stringify({ env: { BIG: 'x'.repeat(512 * 1024) } }))).status).toBe(201);
    expect((await post('not json')).status).toBe(400);

    expect((await fetch(`${server.origin}/agents/local/sessions`)).status).toBe(401);
    expect((await fetch(`${server.origin}/agents/other/sessions`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${server.origin}/agents/local/sessions/nope`, { headers: auth })).status).toBe(404);
  });
});
