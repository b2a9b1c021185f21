// Attacks on the HTTP/WebSocket edge (docs/security.md, attack list 6–8), each performed against a
// real server: DNS rebinding with auth off, plain text on a public address, cross-session fields,
// tokens in the query by value, the retention floor, and the abuse limits (failed auth, frame rate,
// sessions per principal, handshakes that never complete).
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/core/config.ts';
import { b64, TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { request } from '../helpers/tasks.ts';
import { newToken, signJwt, writeTokenFile, type TestToken } from '../helpers/tokens.ts';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** An HTTP request with exactly these headers (fetch would not let a test set Host). */
function raw(origin: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawResponse> {
  const u = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const sessionsPath = '/agents/local/sessions';

describe('6. DNS rebinding with PTY_WS_AUTH=off', () => {
  let server: TestServer;
  let port: number;
  beforeAll(async () => {
    server = await startTestServer({ PTY_WS_AUTH: 'off' });
    port = server.port;
  });
  afterAll(() => server?.stop());

  it('refuses a rebound Host on the upgrade and on every route (421, JSON error); loopback Hosts at our port pass', async () => {
    const url = server.attachUrl(server.defaultSession!.id);
    const rebind = { host: `rebind.example:${port}`, origin: `http://rebind.example:${port}` };
    expect(await TestClient.upgradeStatus(url, { headers: rebind })).toBe(421);
    expect(await TestClient.upgradeStatus(url, { headers: { host: `127.0.0.1:${port + 1}` } })).toBe(421);
    for (const path of [sessionsPath, '/', '/.well-known/agent-card.json', '/metrics']) {
      const res = await raw(server.origin, 'GET', path, { host: `rebind.example:${port}` });
      expect(res.status, path).toBe(421);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'host_not_allowed' } });
    }
    const created = await raw(server.origin, 'POST', sessionsPath, { host: `rebind.example:${port}`, 'content-type': 'application/json' }, '{}');
    expect(created.status).toBe(421);

    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `127.1.2.3:${port}`]) {
      expect(await TestClient.upgradeStatus(url, { headers: { host, origin: `http://${host}` } }), host).toBe(101);
      expect((await raw(server.origin, 'GET', sessionsPath, { host })).status, host).toBe(200);
    }
  });

  it('refuses a cross-site text/plain POST (415) and creates nothing; JSON still creates', async () => {
    const before = (JSON.parse((await raw(server.origin, 'GET', sessionsPath, { host: `127.0.0.1:${port}` })).body) as { sessions: unknown[] }).sessions.length;
    const forms = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'];
    for (const type of forms) {
      const res = await fetch(`${server.origin}${sessionsPath}`, { method: 'POST', headers: { 'content-type': type, origin: 'http://evil.example' }, body: '{"command":"id"}' });
      expect(res.status, type).toBe(415);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unsupported_media_type');
    }
    const noType = await raw(server.origin, 'POST', sessionsPath, { host: `127.0.0.1:${port}` }, '{"command":"id"}');
    expect(noType.status).toBe(415);
    const after = (JSON.parse((await raw(server.origin, 'GET', sessionsPath, { host: `127.0.0.1:${port}` })).body) as { sessions: unknown[] }).sessions.length;
    expect(after).toBe(before);
    const ok = await fetch(`${server.origin}${sessionsPath}`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{}' });
    expect(ok.status).toBe(201);
  });

  it('attach_url echoes only a Host that passed the check', async () => {
    const res = await raw(server.origin, 'POST', sessionsPath, { host: `localhost:${port}`, 'content-type': 'application/json' }, '{}');
    expect(res.status).toBe(201);
    expect((JSON.parse(res.body) as { attach_url: string }).attach_url).toMatch(new RegExp(`^ws://localhost:${port}/agents/local/sessions/`));
  });
});

describe('6. attach_url with auth on never echoes an arbitrary Host', () => {
  let server: TestServer;
  let publicServer: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    publicServer = await startTestServer({ PTY_WS_PUBLIC_URL: 'https://pty.example.com' });
  });
  afterAll(async () => {
    await server?.stop();
    await publicServer?.stop();
  });

  it('uses the bound address for a foreign Host, and PTY_WS_PUBLIC_URL when it is set', async () => {
    const headers = { host: `evil.example:${server.port}`, authorization: `Bearer ${server.devToken}`, 'content-type': 'application/json' };
    const res = await raw(server.origin, 'POST', sessionsPath, headers, '{}');
    expect(res.status).toBe(201);
    const { attach_url, session_id } = JSON.parse(res.body) as { attach_url: string; session_id: string };
    expect(attach_url).toBe(server.attachUrl(session_id));
    const card = JSON.parse((await raw(server.origin, 'GET', '/.well-known/agent-card.json', { host: `evil.example:${server.port}` })).body) as Record<string, unknown>;
    expect(JSON.stringify(card)).not.toContain('evil.example');

    const pub = await raw(publicServer.origin, 'POST', sessionsPath, { ...headers, host: `evil.example:${publicServer.port}`, authorization: `Bearer ${publicServer.devToken}` }, '{}');
    expect((JSON.parse(pub.body) as { attach_url: string }).attach_url).toMatch(/^wss:\/\/pty\.example\.com\/agents\/local\/sessions\//);
  });
});

describe('7. binding §11 by default', () => {
  it('refuses plain ws:// on a non-loopback address unless PTY_WS_ALLOW_PLAINTEXT=1', async () => {
    const e = await startTestServer({ PTY_WS_HOST: '0.0.0.0' }).then(
      async (s) => {
        await s.stop();
        return null;
      },
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(ConfigError);
    expect(String((e as Error).message)).toMatch(/PTY_WS_HOST=0\.0\.0\.0.*PTY_WS_ALLOW_PLAINTEXT=1/s);
    const allowed = await startTestServer({ PTY_WS_HOST: '0.0.0.0', PTY_WS_ALLOW_PLAINTEXT: '1' });
    try {
      const res = await fetch(`http://127.0.0.1:${allowed.port}${sessionsPath}`, { headers: { authorization: `Bearer ${allowed.devToken}` } });
      expect(res.status).toBe(200);
    } finally {
      await allowed.stop();
    }
    // Behind a TLS proxy on a public address, a request that did not come through TLS is refused.
    const proxied = await startTestServer({ PTY_WS_HOST: '0.0.0.0', PTY_WS_TRUST_PROXY_TLS: '1' });
    try {
      const url = `http://127.0.0.1:${proxied.port}${sessionsPath}`;
      const auth = { authorization: `Bearer ${proxied.devToken}` };
      expect((await fetch(url, { headers: auth })).status).toBe(403);
      expect((await fetch(url, { headers: { ...auth, 'x-forwarded-proto': 'https' } })).status).toBe(200);
    } finally {
      await proxied.stop();
    }
  });

  it('refuses a replay retention below the spec minimum, naming the variable and the minimum', async () => {
    expect(() => loadConfig({ PTY_WS_REPLAY_BUFFER_FRAMES: '999' })).toThrow(/PTY_WS_REPLAY_BUFFER_FRAMES.*1000/);
    expect(() => loadConfig({ PTY_WS_REPLAY_RETENTION_SECONDS: '86399' })).toThrow(/PTY_WS_REPLAY_RETENTION_SECONDS.*86400/);
    await expect(startTestServer({ PTY_WS_REPLAY_BUFFER_FRAMES: '40', PTY_WS_REPLAY_RETENTION_SECONDS: '1' })).rejects.toThrow(/PTY_WS_REPLAY_BUFFER_FRAMES/);
    // Production refuses it even from code (the tests' own way to shorten retention).
    await expect(
      startTestServer({ PTY_WS_PRODUCTION: '1', PTY_WS_TRUST_PROXY_TLS: '1' }, {}, { overrides: { replayBufferFrames: 10 } }),
    ).rejects.toThrow(/replay_buffer_frames 10 is below the minimum of 1000/);
  });

  describe('with a token map', () => {
    const alice: TestToken = { token: newToken(), principal: 'alice', scopes: ['pty:control'] };
    const secret = 'edge-test-secret-0123456789-abcdefghijklmnopqrstuv';
    let dir: string;
    let server: TestServer;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'pty-ws-edge-'));
      writeTokenFile(join(dir, 'tokens.json'), [alice]);
      server = await startTestServer({ PTY_WS_TOKENS_FILE: join(dir, 'tokens.json'), PTY_WS_JWT_SECRET: secret });
    });
    afterAll(async () => {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('refuses a session reference to another session in any payload field, naming it', async () => {
      const a = await server.createSession({}, alice.token);
      const b = await server.createSession({}, alice.token);
      const c = await TestClient.connect(a.attach_url, { token: alice.token });
      await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
      const attempts: Array<[string, Record<string, unknown>, string]> = [
        ['ListTasks', { context_id: b.session_id }, 'payload.context_id'],
        ['ListTasks', { contextId: b.session_id }, 'payload.contextId'],
        ['ListTasks', { filter: { context_id: b.session_id } }, 'payload.filter.context_id'],
        ['ListTasks', { filter: { contextId: b.session_id } }, 'payload.filter.contextId'],
        ['GetTask', { task_id: 'x', context_id: b.session_id }, 'payload.context_id'],
        ['pty.join_session', { role: 'controller', sessionId: b.session_id }, 'payload.sessionId'],
        ['SendMessage', { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'id' }] }, metadata: { session_id: b.session_id } }, 'payload.metadata.session_id'],
      ];
      for (const [op, payload, field] of attempts) {
        const answer = await request(c, op, payload);
        expect(answer.op, `${op} ${field}`).toBe('Error');
        expect(answer.payload.code).toBe('INVALID_REQUEST');
        expect(String(answer.payload.message)).toContain(field);
      }
      // Naming the connection's own session is fine.
      expect((await request(c, 'ListTasks', { context_id: a.session_id, filter: { contextId: a.session_id } })).op).toBe('ListTasks.Response');
      c.close();
    });

    it('refuses a token in the query by value and by name in any case (400)', async () => {
      const { attach_url: url } = await server.createSession({}, alice.token);
      const jwt = await signJwt({ sub: 'q', scope: 'pty:control' }, new TextEncoder().encode(secret));
      for (const q of [`Token=${alice.token}`, `api_key=${alice.token}`, `x=${alice.token}`, `ACCESS_TOKEN=nope`, `session=${jwt}`, `k=Bearer%20${alice.token}`, alice.token, 's=pwshare_0123456789abcdef']) {
        expect(await TestClient.upgradeStatus(`${url}?${q}`, { token: alice.token }), q).toBe(400);
        expect((await fetch(`${server.origin}${sessionsPath}?${q}`, { headers: { authorization: `Bearer ${alice.token}` } })).status, q).toBe(400);
      }
      expect(server.logs.some((l) => l.includes(alice.token) || l.includes(jwt))).toBe(false);
      expect(await TestClient.upgradeStatus(`${url}?label=me&x=1`, { token: alice.token })).toBe(101);
    });
  });
});

describe('8. abuse limits', () => {
  const alice: TestToken = { token: newToken(), principal: 'alice', scopes: ['pty:control'] };
  const carl: TestToken = { token: newToken(), principal: 'carl', scopes: ['pty:control'] };
  let dir: string;
  let server: TestServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pty-ws-edge-abuse-'));
    writeTokenFile(join(dir, 'tokens.json'), [alice, carl]);
    server = await startTestServer({ PTY_WS_TOKENS_FILE: join(dir, 'tokens.json'), PTY_WS_MAX_SESSIONS_PER_PRINCIPAL: '5' });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('caps live sessions per principal (429); an ended one frees its place', async () => {
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await server.createSession({ command: 'sleep 60' }, carl.token));
    const post = () => fetch(`${server.origin}${sessionsPath}`, { method: 'POST', headers: { authorization: `Bearer ${carl.token}`, 'content-type': 'application/json' }, body: '{}' });
    const over = await Promise.all(Array.from({ length: 20 }, post));
    expect(over.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 429));
    expect(((await over[0]!.json()) as { error: { code: string; message: string } }).error.message).toMatch(/PTY_WS_MAX_SESSIONS_PER_PRINCIPAL=5/);
    const started = await TestClient.connect(created[0]!.attach_url, { token: carl.token });
    await started.join({ role: 'controller' });
    const del = await fetch(`${server.origin}${sessionsPath}/${created[0]!.session_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${carl.token}` } });
    expect(del.status).toBeLessThan(300);
    await started.waitForClose();
    await expect.poll(async () => (await post()).status, { timeout: 10_000 }).toBe(201);
    expect(loadConfig({}).maxSessionsPerPrincipal).toBe(64);
  });

  it('rate-limits one connection’s frames: RATE_LIMITED, then close 4429 when it goes on; a fast typist and a neighbour are untouched', async () => {
    const { attach_url: url } = await server.createSession({}, alice.token);
    const typist = await TestClient.connect(url, { token: alice.token });
    await typist.join({ role: 'controller' });
    for (const ch of 'echo typed-fast\r') {
      typist.send('pty.session_input', { data: b64(ch) });
      await new Promise((r) => setTimeout(r, 10));
    }
    typist.send('pty.session_input', { data: b64(`: ${'p'.repeat(60_000)}\r`) });
    await typist.waitForOutput('typed-fast');

    const flood = await TestClient.connect(url, { token: alice.token });
    await flood.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    const frame = JSON.stringify({ op: 'ping', id: 'f', ts: '2026-01-01T00:00:00Z', payload: {} });
    const started = Date.now();
    while (!flood.closed && Date.now() - started < 20_000) {
      for (let i = 0; i < 200; i++) flood.sendRaw(frame);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(flood.closed?.code).toBe(4429);
    const limited = flood.frames().filter((f) => f.op === 'Error' && f.payload.code === 'RATE_LIMITED');
    expect(limited.length).toBeGreaterThan(1);
    expect(flood.frames().filter((f) => f.op === 'Error' && f.payload.code !== 'RATE_LIMITED')).toEqual([]);

    expect(typist.frames().filter((f) => f.op === 'Error')).toEqual([]);
    typist.send('pty.session_input', { data: b64('echo after-flood\r') });
    await typist.waitForOutput('after-flood');
    typist.close();
  }, 40_000);

  it('drops a handshake that never completes within seconds', async () => {
    /** How long until the server hangs up (its FIN, or a reset): ms from now. */
    const closedWithin = (s: Socket): Promise<number> => {
      const t0 = Date.now();
      return new Promise((resolve) => {
        const done = () => resolve(Date.now() - t0);
        if (s.readableEnded || s.destroyed) done();
        for (const e of ['end', 'close', 'error']) s.once(e, done);
      });
    };
    const open = async (): Promise<Socket> => {
      const s = connect(server.port, '127.0.0.1');
      s.on('error', () => undefined);
      s.resume();
      await new Promise((r) => s.once('connect', r));
      return s;
    };
    const silent = await open();
    const partial = await open();
    partial.write(`GET ${sessionsPath}/x/attach HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nUpgrade: websocket\r\n`);
    const [a, b] = await Promise.all([closedWithin(silent), closedWithin(partial)]);
    expect(a).toBeLessThan(10_000);
    expect(b).toBeLessThan(10_000);
  }, 30_000);

  // Last: it leaves 127.0.0.1 throttled on this server.
  it('throttles failed authentication per address: 429 with Retry-After after a burst, for upgrades and REST alike', async () => {
    const { attach_url: url } = await server.createSession({}, alice.token);
    const burst = server.config.authFailures.burst;
    const statuses: number[] = [];
    for (let i = 0; i < burst + 5; i++) statuses.push(await TestClient.upgradeStatus(url, { token: `wrong-${i}` }));
    expect(statuses.slice(0, burst)).toEqual(Array.from({ length: burst }, () => 401));
    expect(statuses.slice(burst)).toEqual([429, 429, 429, 429, 429]);
    const rest = await raw(server.origin, 'GET', sessionsPath, { host: `127.0.0.1:${server.port}`, authorization: 'Bearer wrong' });
    expect(rest.status).toBe(429);
    expect(Number(rest.headers['retry-after'])).toBeGreaterThan(0);
    expect(server.logs.some((l) => l.includes('"status":429') && l.includes('auth_throttled'))).toBe(true);
    // Everyone else behind the same address still gets in: a token that verifies passes (upgrade and
    // REST), and what needs no credential is never throttled.
    expect(await TestClient.upgradeStatus(url, { token: alice.token })).toBe(101);
    const ok = await raw(server.origin, 'GET', sessionsPath, { host: `127.0.0.1:${server.port}`, authorization: `Bearer ${alice.token}` });
    expect(ok.status).toBe(200);
    expect((await raw(server.origin, 'GET', '/healthz', { host: `127.0.0.1:${server.port}` })).status).toBe(200);
    // A client retrying one stale token is throttled on that token alone.
    const again = await raw(server.origin, 'GET', sessionsPath, { host: `127.0.0.1:${server.port}`, authorization: 'Bearer wrong-0' });
    expect(again.status).toBe(429);
  });

  it('a token that failed a burst of times is throttled while the address is not', async () => {
    const other = await startTestServer();
    try {
      const burst = other.config.authFailures.burst;
      const path = `/agents/${other.config.instanceId}/sessions`;
      const statuses: number[] = [];
      for (let i = 0; i < burst + 2; i++) statuses.push((await raw(other.origin, 'GET', path, { host: `127.0.0.1:${other.port}`, authorization: 'Bearer stale-token' })).status);
      expect(statuses.slice(0, burst)).toEqual(Array.from({ length: burst }, () => 401));
      expect(statuses.slice(burst)).toEqual([429, 429]);
      expect((await raw(other.origin, 'GET', path, { host: `127.0.0.1:${other.port}`, authorization: `Bearer ${other.devToken}` })).status).toBe(200);
    } finally {
      await other.stop();
    }
  });
});
