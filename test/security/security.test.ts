// Every way in that should be shut, tried against a real server (token map + HS256 JWTs, real PTY
// host, real shell): each attempt is refused with the documented status or code while a bystander
// session keeps working. Includes the binding's conformance scenarios on auth and scoped control (docs/protocol.md §1.4, §5.1).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPGRADE_ATTEMPTS_PER_SECOND } from '../../src/core/config.ts';
import { b64, TestClient, type Frame } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, nowSeconds, signJwt, unsignedJwt, writeTokenFile, type TestToken } from '../helpers/tokens.ts';

const SECRET = 'security-test-secret-0123456789-abcdefghijklmnop';
const secretKey = new TextEncoder().encode(SECRET);
const UA = { 'user-agent': 'pty-ws-security-test' };

const alice: TestToken = { token: newToken(), principal: 'alice', scopes: ['pty:control'] };
const olga: TestToken = { token: newToken(), principal: 'olga', scopes: ['pty:observe'] };
const root: TestToken = { token: newToken(), principal: 'root', scopes: ['pty:admin'] };
const bob: TestToken = { token: newToken(), principal: 'bob', scopes: ['pty:control'] };
const rapid: TestToken = { token: newToken(), principal: 'rapid', scopes: ['pty:control'] };
const stale: TestToken = { token: newToken(), principal: 'stale', scopes: ['pty:control'], expires_at: '2020-01-01T00:00:00Z' };
const baseTokens = [alice, olga, root, bob, rapid, stale];

let dir: string;
let tokensFile: string;
let server: TestServer;
let bystander: TestClient;
let bystanderChecks = 0;

const createSession = (token: string, body: Record<string, unknown> = {}) => server.createSession(body, token);

/** The bystander session still runs what its controller types. */
async function bystanderWorks(): Promise<void> {
  const mark = `alive-${++bystanderChecks}`;
  bystander.send('pty.session_input', { data: b64(`echo ${mark}\r`) });
  await bystander.waitForOutput(mark);
  expect(bystander.closed).toBeNull();
}

const errorFor = (c: TestClient, id: string, what: string): Promise<Frame> => c.waitForFrame((f) => f.op === 'Error' && f.id === id, what);
const status = (url: string, opts: Parameters<typeof TestClient.refusedStatus>[1] = {}) => TestClient.refusedStatus(url, opts);
const logLines = () => server.logs.map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-security-'));
  tokensFile = join(dir, 'tokens.json');
  writeTokenFile(tokensFile, baseTokens);
  server = await startTestServer({ PTY_WS_TOKENS_FILE: tokensFile, PTY_WS_JWT_SECRET: SECRET }, {}, { overrides: { upgradeAttemptsPerSecond: UPGRADE_ATTEMPTS_PER_SECOND } });
  expect(server.devToken).toBeNull();
  const s = await createSession(bob.token);
  bystander = await TestClient.connect(s.attach_url, { token: bob.token });
  await bystander.join({ role: 'controller' });
});
afterAll(async () => {
  bystander?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('conformance 6: auth enforcement', () => {
  it('refuses an upgrade without a bearer, or with an unknown, expired or malformed one, with HTTP 401 before the upgrade', async () => {
    const { attach_url: url } = await createSession(alice.token);
    expect(await status(url)).toBe(401);
    expect(await status(url, { token: 'not-a-token-anyone-issued' })).toBe(401);
    expect(await status(url, { token: stale.token })).toBe(401);
    expect(await status(url, { token: await signJwt({ sub: 'late', scope: 'pty:control', exp: nowSeconds() - 10 }, secretKey) })).toBe(401);
    expect(await status(url, { headers: { authorization: 'Basic YWxpY2U6c2VjcmV0' } })).toBe(401);
    expect(await status(url, { protocols: ['pty-ws.v1', 'bearer.%%%'] })).toBe(401);
    const ok = await TestClient.connect(url, { token: alice.token });
    await ok.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    ok.close();
    await bystanderWorks();
  });

  it('ends a connection whose JWT expires mid-connection with UNAUTHENTICATED and close 4401, observers too', async () => {
    const { attach_url: url } = await createSession(alice.token);
    const exp = nowSeconds() + 2;
    const ctl = await TestClient.connect(url, { token: await signJwt({ sub: 'brief-ctl', scope: 'pty:control', exp }, secretKey) });
    await ctl.join({ role: 'controller' });
    const obs = await TestClient.connect(url, { token: await signJwt({ sub: 'brief-obs', scope: 'pty:observe', exp }, secretKey) });
    await obs.join({ role: 'observer' });
    const lasting = await TestClient.connect(url, { token: alice.token });
    await lasting.join({ role: 'observer' });
    for (const c of [ctl, obs]) {
      expect((await c.waitForClose(6000)).code).toBe(4401);
      const last = c.frames().at(-1)!;
      expect(last.op).toBe('Error');
      expect(last.payload).toMatchObject({ code: 'UNAUTHENTICATED', a2a_error: { data: [{ reason: 'UNAUTHENTICATED' }] } });
    }
    await lasting.waitForFrame((f) => f.payload.kind === 'MembershipChanged' && (f.payload.controllers as unknown[]).length === 0 && (f.payload.observers as unknown[]).length === 1, 'both expired members gone');
    expect(lasting.closed).toBeNull();
    lasting.close();
    await bystanderWorks();
  });

  it('ends a connection whose token map entry expires mid-connection the same way', async () => {
    const brief: TestToken = { token: newToken(), principal: 'brief', scopes: ['pty:control'], expires_at: new Date(Date.now() + 2000).toISOString() };
    writeTokenFile(tokensFile, [...baseTokens, brief]);
    expect(await server.reloadTokens()).toBe(true);
    const { attach_url: url } = await createSession(alice.token);
    const c = await TestClient.connect(url, { token: brief.token });
    await c.join({ role: 'controller' });
    expect((await c.waitForClose(6000)).code).toBe(4401);
    expect(c.frames().at(-1)!.payload.code).toBe('UNAUTHENTICATED');
    expect(await status(url, { token: brief.token })).toBe(401);
    await bystanderWorks();
  });
});

describe('conformance 7: scoped control', () => {
  it('lets pty:observe attach, watch, replay and ask for keyframes, but not type (JSON or PW1I), resize or become controller', async () => {
    const { attach_url: url } = await createSession(alice.token);
    // The first joiner of a fresh session is controller unless its principal may only observe; one
    // that asks for controller explicitly is refused (PERMISSION_DENIED, no role) and may join as observer.
    const obs = await TestClient.connect(url, { token: olga.token, headers: UA });
    const refused = await obs.join({ role: 'controller' });
    expect(refused.at(-1)!.payload).toMatchObject({ code: 'PERMISSION_DENIED' });
    const first = await obs.join({ role: 'observer' });
    expect(first.find((f) => f.payload.kind === 'RoleAssigned')!.payload).toMatchObject({ role: 'observer' });

    const ctl = await TestClient.connect(url, { token: alice.token });
    const ctlJoin = await ctl.join({ role: 'controller' });
    expect(ctlJoin.find((f) => f.payload.kind === 'RoleAssigned')!.payload.role).toBe('controller');
    ctl.send('pty.session_input', { data: b64('echo watched-$((6*7))\r') });
    await obs.waitForOutput('watched-42');

    const denied = [
      obs.send('pty.session_input', { data: b64('echo olga-typed\r') }),
      obs.send('pty.session_resize', { cols: 20, rows: 5 }),
      obs.send('pty.request_role', { role: 'controller' }),
    ];
    for (const id of denied) expect((await errorFor(obs, id, 'denied')).payload).toMatchObject({ code: 'PERMISSION_DENIED', a2a_error: { data: [{ reason: 'PERMISSION_DENIED' }] } });
    const kf = obs.send('pty.request_keyframe');
    await obs.waitForFrame((f) => f.id === kf && f.payload.kind === 'Keyframe', 'keyframe for the observer');

    const bin = await TestClient.connect(url, { token: olga.token, protocols: ['pty-ws.v1.binary'] });
    await bin.join({ role: 'observer' });
    bin.sendRaw(Buffer.concat([Buffer.from('PW1I'), Buffer.from('echo olga-binary\r')]));
    expect((await bin.waitForFrame((f) => f.op === 'Error', 'PW1I denied')).payload.code).toBe('PERMISSION_DENIED');

    const replay = await TestClient.connect(url, { token: olga.token });
    await replay.join({ role: 'observer' }, { replay_from: 0 });
    expect(replay.output()).toContain('watched-42');

    ctl.send('pty.session_input', { data: b64('echo still-mine\r') });
    await ctl.waitForOutput('still-mine');
    for (const c of [obs, bin, replay, ctl]) expect(c.closed).toBeNull();
    expect(ctl.output()).not.toContain('olga-typed');
    expect(ctl.output()).not.toContain('olga-binary');
    for (const c of [obs, bin, replay, ctl]) c.close();
    await bystanderWorks();
  });

  it('lets pty:control control the sessions it is allowed and nothing else', async () => {
    const a = await createSession(alice.token);
    const b = await createSession(alice.token);
    const onlyA = await signJwt({ sub: 'rita', scope: 'pty:control', sessions: [a.session_id] }, secretKey);
    expect(await status(b.attach_url, { token: onlyA })).toBe(403);
    const c = await TestClient.connect(a.attach_url, { token: onlyA });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo rita-$((1+2))\r') });
    await c.waitForOutput('rita-3');
    c.close();
    await bystanderWorks();
  });
});

describe('each attempt is refused and harms nobody else', () => {
  it('JWTs with alg none or signed with the wrong key: 401', async () => {
    const { attach_url: url } = await createSession(alice.token);
    expect(await status(url, { token: unsignedJwt({ sub: 'mallory', scope: 'pty:admin' }) })).toBe(401);
    expect(await status(url, { token: await signJwt({ sub: 'mallory', scope: 'pty:admin' }, new TextEncoder().encode('not-the-secret-but-long-enough-0123456789')) })).toBe(401);
    await bystanderWorks();
  });

  it('a token in the query string: 400, and it is never logged', async () => {
    const { attach_url: url } = await createSession(alice.token);
    expect(await status(`${url}?token=${alice.token}`, { token: alice.token })).toBe(400);
    expect(await status(`${url}?access_token=${alice.token}`)).toBe(400);
    expect(server.logs.some((l) => l.includes(alice.token))).toBe(false);
    await bystanderWorks();
  });

  it('a token-map token restricted to session A attaching to session B: 403; reloading the map keeps open connections', async () => {
    const a = await createSession(alice.token);
    const b = await createSession(alice.token);
    const before = await TestClient.connect(b.attach_url, { token: alice.token });
    await before.join({ role: 'controller' });
    const rita: TestToken = { token: newToken(), principal: 'rita', scopes: ['pty:control'], sessions: [a.session_id] };
    expect(await status(a.attach_url, { token: rita.token })).toBe(401);
    writeTokenFile(tokensFile, [...baseTokens, rita]);
    expect(await server.reloadTokens()).toBe(true);
    expect(await status(b.attach_url, { token: rita.token })).toBe(403);
    const ok = await TestClient.connect(a.attach_url, { token: rita.token });
    await ok.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    ok.close();
    before.send('pty.session_input', { data: b64('echo survived-reload\r') });
    await before.waitForOutput('survived-reload');
    before.close();
    await bystanderWorks();
  });

  it('a broken token map on reload keeps the old one and says why', async () => {
    const { attach_url: url } = await createSession(alice.token);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(tokensFile, '{"tokens": [{"sha256": "nope"}]}');
    expect(await server.reloadTokens()).toBe(false);
    const line = logLines().find((l) => l.msg === 'token map reload failed: keeping the previous map');
    expect(String(line?.error)).toContain(tokensFile);
    expect(String(line?.error)).toContain('tokens.0.sha256');
    const c = await TestClient.connect(url, { token: alice.token });
    await c.waitForFrame((f) => f.op === 'binding_hello', 'hello with the old map');
    c.close();
    writeTokenFile(tokensFile, baseTokens);
    expect(await server.reloadTokens()).toBe(true);
    await bystanderWorks();
  });

  it('a forbidden Origin: 403; the same origin and no Origin pass', async () => {
    const { attach_url: url } = await createSession(alice.token);
    expect(await status(url, { token: alice.token, headers: { origin: 'https://evil.example' } })).toBe(403);
    expect(await status(url, { token: alice.token, headers: { origin: 'null' } })).toBe(403);
    expect(await status(url, { token: alice.token, headers: { origin: server.origin.replace('127.0.0.1', 'localhost') } })).toBe(403);
    const same = await TestClient.connect(url, { token: alice.token, headers: { origin: server.origin } });
    await same.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    same.close();
    await bystanderWorks();
  });

  it('50 rapid upgrades from one principal: the excess gets 429 before the upgrade; others attach normally', async () => {
    const { attach_url: url } = await createSession(alice.token);
    const attempts = await Promise.all(
      Array.from({ length: 50 }, () =>
        TestClient.connect(url, { token: rapid.token }).then(
          (c) => ({ status: 101, client: c }),
          (e: Error) => ({ status: Number(/HTTP (\d+)/.exec(e.message)?.[1] ?? 0), client: null }),
        ),
      ),
    );
    const accepted = attempts.filter((a) => a.status === 101);
    const refused = attempts.filter((a) => a.status === 429);
    expect(accepted.length + refused.length).toBe(50);
    expect(accepted.length).toBeGreaterThan(0);
    expect(accepted.length).toBeLessThanOrEqual(UPGRADE_ATTEMPTS_PER_SECOND);
    for (const a of accepted) a.client!.close();
    const other = await TestClient.connect(url, { token: alice.token });
    await other.join({ role: 'controller' });
    other.close();
    expect(logLines().some((l) => l.msg === 'audit.refused' && l.status === 429 && l.principal === 'rapid')).toBe(true);
    await bystanderWorks();
  });

  it('an oversized frame closes only that connection (1009); a frame nested too deep is INVALID_REQUEST', async () => {
    const { attach_url: url } = await createSession(alice.token);
    const deep = await TestClient.connect(url, { token: alice.token });
    await deep.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    deep.sendRaw(`{"op":"ping","id":"deep","ts":"2026-01-01T00:00:00Z","payload":{"x":${'['.repeat(100)}${']'.repeat(100)}}}`);
    expect((await deep.waitForFrame((f) => f.op === 'Error', 'depth error')).payload).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(/deeper than 32/) });
    const ping = deep.send('ping');
    await deep.waitForFrame((f) => f.op === 'pong' && f.id === ping, 'pong after the deep frame');

    const big = await TestClient.connect(url, { token: alice.token });
    big.sendRaw('x'.repeat(2 * 1024 * 1024));
    expect((await big.waitForClose()).code).toBe(1009);
    expect(deep.closed).toBeNull();
    deep.close();
    await bystanderWorks();
  });
});

describe('REST uses the same principals and scopes', () => {
  const rest = (path: string, token: string, init: RequestInit = {}) =>
    fetch(`${server.origin}/agents/local/sessions${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });

  it('observe reads, control creates and deletes its own, admin deletes any, restricted bearers see only their sessions', async () => {
    const mine = await createSession(alice.token);
    const bobs = await createSession(bob.token);
    expect((await rest('', olga.token)).status).toBe(200);
    expect((await rest('', olga.token, { method: 'POST', body: '{}' })).status).toBe(403);
    expect((await rest(`/${mine.session_id}`, olga.token, { method: 'DELETE' })).status).toBe(403);
    expect((await rest(`/${bobs.session_id}`, alice.token, { method: 'DELETE' })).status).toBe(403);
    expect((await rest(`/${mine.session_id}`, alice.token, { method: 'DELETE' })).status).toBeLessThan(300);
    expect((await rest(`/${bobs.session_id}`, root.token, { method: 'DELETE' })).status).toBeLessThan(300);

    const onlyMine = await signJwt({ sub: 'rita', scope: 'pty:control', sessions: [mine.session_id] }, secretKey);
    const listed = (await (await rest('', onlyMine)).json()) as { sessions: Array<{ session_id: string }> };
    expect(listed.sessions.map((s) => s.session_id)).toEqual([mine.session_id]);
    expect((await rest(`/${mine.session_id}`, onlyMine)).status).toBe(200);
    expect((await rest(`/${bobs.session_id}`, onlyMine)).status).toBe(403);
    expect((await rest(`/${mine.session_id}/recording.cast`, onlyMine)).status).toBe(200);
    expect((await rest(`/${bobs.session_id}/recording.cast`, onlyMine)).status).toBe(403);
    expect((await rest('', onlyMine, { method: 'POST', body: '{}' })).status).toBe(403);
    expect((await rest('', stale.token)).status).toBe(401);
    expect((await fetch(`${server.origin}/agents/local/sessions?access_token=${alice.token}`)).status).toBe(400);
    expect((await rest('', unsignedJwt({ sub: 'm', scope: 'pty:admin' }))).status).toBe(401);
    await bystanderWorks();
  });
});

describe('audit log', () => {
  it('records every attach with principal, client_id, role, scopes, remote address and user agent; observers as disclosures; role changes; never tokens or input', async () => {
    const { attach_url: url } = await createSession(alice.token);
    const ctl = await TestClient.connect(url, { token: alice.token, headers: UA });
    const ctlRole = (await ctl.join({ role: 'controller' })).find((f) => f.payload.kind === 'RoleAssigned')!;
    const obs = await TestClient.connect(url, { token: olga.token, headers: UA });
    const obsRole = (await obs.join({ role: 'observer' })).find((f) => f.payload.kind === 'RoleAssigned')!;
    ctl.send('pty.session_input', { data: b64('echo typed-secret-4711\r') });
    await obs.waitForOutput('typed-secret-4711');
    const change = ctl.send('pty.request_role', { role: 'observer' });
    await ctl.waitForFrame((f) => f.id === change && f.payload.kind === 'RoleAssigned', 'role change');
    obs.close();
    await ctl.waitForFrame((f) => f.payload.kind === 'MembershipChanged' && (f.payload.controllers as unknown[]).length === 0 && (f.payload.observers as unknown[]).length === 1, 'observer gone');

    const lines = logLines();
    const attachOf = (clientId: unknown) => lines.find((l) => l.msg === 'audit.attach' && l.client_id === clientId);
    expect(attachOf(ctlRole.payload.client_id)).toMatchObject({ principal: 'alice', role: 'controller', scopes: ['pty:control'], remote_address: expect.stringMatching(/127\.0\.0\.1/), user_agent: 'pty-ws-security-test' });
    expect(attachOf(ctlRole.payload.client_id)!.disclosure).toBeUndefined();
    expect(attachOf(obsRole.payload.client_id)).toMatchObject({ principal: 'olga', role: 'observer', scopes: ['pty:observe'], disclosure: true, user_agent: 'pty-ws-security-test' });
    expect(lines.find((l) => l.msg === 'audit.role_change' && l.client_id === ctlRole.payload.client_id)).toMatchObject({ principal: 'alice', from: 'controller', to: 'observer', disclosure: true });
    expect(lines.find((l) => l.msg === 'audit.detach' && l.client_id === obsRole.payload.client_id)).toMatchObject({ principal: 'olga', role: 'observer' });
    expect(lines.find((l) => l.msg === 'audit.connect' && l.client_id === obsRole.payload.client_id)).toMatchObject({ principal: 'olga' });

    const all = server.logs.join('\n');
    for (const t of baseTokens) expect(all).not.toContain(t.token);
    expect(all).not.toContain('typed-secret');
    expect(all).not.toContain(b64('echo typed-secret-4711\r'));
    ctl.close();
    await bystanderWorks();
  });
});
