// Share links (docs/sharing.md) against the real router, PTY host, shell and libSQL file: minted
// over REST, used as bearers on the WebSocket and REST, never more than their minter has, listed
// without tokens, revoked (its connections close 4401 at once), expiring, surviving a restart.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';
import { MAX_ACTIVE_SHARES } from '../../src/shares/share-service.ts';

const alice: TestToken = { token: newToken(), principal: 'alice', scopes: ['pty:control'] };
const olga: TestToken = { token: newToken(), principal: 'olga', scopes: ['pty:observe'] };
const brief: TestToken = { token: newToken(), principal: 'brief', scopes: ['pty:control'], expires_at: new Date(Date.now() + 10 * 60_000).toISOString() };

let dir: string;
let stateDir: string;
let server: TestServer;

const env = () => ({ PTY_WS_TOKENS_FILE: join(dir, 'tokens.json') });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-shares-'));
  writeTokenFile(join(dir, 'tokens.json'), [alice, olga, brief]);
  server = await startTestServer(env());
  stateDir = server.dir;
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function rest(path: string, token: string | null, init: RequestInit = {}): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  return fetch(`${server.origin}/agents/${server.config.instanceId}/sessions${path}`, { ...init, headers });
}

interface Minted {
  share_id: string;
  token: string;
  url: string;
  scope: string;
  session_id: string;
  label: string | null;
  expires_at: string;
}

async function mint(sessionId: string, token: string, body: Record<string, unknown> = {}): Promise<Minted> {
  const res = await rest(`/${sessionId}/shares`, token, { method: 'POST', body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Minted;
}

async function running(token = alice.token): Promise<{ id: string; url: string; ctl: TestClient }> {
  const s = await server.createSession({}, token);
  const ctl = await TestClient.connect(s.attach_url, { token });
  await ctl.join({ role: 'controller' });
  return { id: s.session_id, url: s.attach_url, ctl };
}

describe('share links', () => {
  it('an observe share watches its one session and nothing more', async () => {
    const { id, url, ctl } = await running();
    const share = await mint(id, alice.token, { label: 'for bob' });
    expect(share).toMatchObject({ scope: 'pty:observe', session_id: id, label: 'for bob' });
    expect(share.token).toMatch(/^pwshare_/);
    const expires = Date.parse(share.expires_at) - Date.now();
    expect(expires).toBeGreaterThan(3590_000);
    expect(expires).toBeLessThanOrEqual(3600_000);
    // The page URL carries the token in the fragment only.
    const u = new URL(share.url);
    expect(u.search).toBe('');
    expect(Object.fromEntries(new URLSearchParams(u.hash.slice(1)))).toEqual({ token: share.token, session: id, instance: server.config.instanceId, observe: '1' });

    const watcher = await TestClient.connect(url, { token: share.token });
    const asController = await watcher.join({ role: 'controller' });
    expect(asController.at(-1)!.payload).toMatchObject({ code: 'PERMISSION_DENIED' });
    await watcher.join({ role: 'observer' });
    ctl.send('pty.session_input', { data: b64('echo shared-$((20+1))\r') });
    await watcher.waitForOutput('shared-21');
    const typed = watcher.send('pty.session_input', { data: b64('echo share-typed\r') });
    expect((await watcher.waitForFrame((f) => f.id === typed, 'input refused')).payload.code).toBe('PERMISSION_DENIED');

    // REST: this session only; no new sessions, no shares of its own.
    expect((await rest(`/${id}`, share.token)).status).toBe(200);
    const listed = (await (await rest('', share.token)).json()) as { sessions: Array<{ session_id: string }> };
    expect(listed.sessions.map((s) => s.session_id)).toEqual([id]);
    expect((await rest('', share.token, { method: 'POST', body: '{}' })).status).toBe(403);
    expect((await rest(`/${id}/shares`, share.token, { method: 'POST', body: '{}' })).status).toBe(403);
    const other = await server.createSession({}, alice.token);
    expect(await TestClient.refusedStatus(other.attach_url, { token: share.token })).toBe(403);
    expect(ctl.output()).not.toContain('share-typed\r\n');
    watcher.close();
    ctl.close();
  });

  it('a control share pairs: it may type; nobody mints more than they have', async () => {
    const { id, url, ctl } = await running();
    const pair = await mint(id, alice.token, { scope: 'pty:control', expires_in: 600 });
    expect(new URLSearchParams(new URL(pair.url).hash.slice(1)).has('observe')).toBe(false);
    const partner = await TestClient.connect(url, { token: pair.token });
    await partner.join({ role: 'controller' });
    partner.send('pty.session_input', { data: b64('echo pair-$((30+3))\r') });
    await ctl.waitForOutput('pair-33');

    // An observer cannot mint at all; a share's own shares end with it.
    expect((await rest(`/${id}/shares`, olga.token, { method: 'POST', body: '{}' })).status).toBe(403);
    const child = await mint(id, pair.token, { expires_in: 604_800 });
    expect(Date.parse(child.expires_at)).toBe(Date.parse(pair.expires_at));
    const fromBrief = await mint(id, brief.token, { expires_in: 604_800 });
    expect(Date.parse(fromBrief.expires_at)).toBe(Date.parse(brief.expires_at!));
    // Bad requests are named.
    const tooLong = await rest(`/${id}/shares`, alice.token, { method: 'POST', body: JSON.stringify({ expires_in: 604_801 }) });
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as { error: { message: string } }).error.message).toMatch(/at most 604800/);
    expect((await rest(`/${id}/shares`, alice.token, { method: 'POST', body: JSON.stringify({ scope: 'pty:admin' }) })).status).toBe(400);
    expect((await rest('/01900000-0000-7000-8000-000000000000/shares', alice.token, { method: 'POST', body: '{}' })).status).toBe(404);
    partner.close();
    ctl.close();
  });

  it('lists without tokens; a revoked share closes its connections with 4401 at once and is refused from then on', async () => {
    const { id, url, ctl } = await running();
    const a = await mint(id, alice.token, { label: 'a' });
    const b = await mint(id, alice.token, { label: 'b', scope: 'pty:control' });
    const list = (await (await rest(`/${id}/shares`, alice.token)).json()) as { shares: Array<Record<string, unknown>> };
    expect(list.shares.map((s) => s.label)).toEqual(['a', 'b']);
    expect(list.shares[0]).toEqual({ share_id: a.share_id, scope: 'pty:observe', label: 'a', created_by: 'alice', created_at: expect.any(String), expires_at: a.expires_at });
    expect(JSON.stringify(list)).not.toContain('pwshare_');
    expect((await rest(`/${id}/shares`, olga.token)).status).toBe(403);

    const watchers = [await TestClient.connect(url, { token: a.token }), await TestClient.connect(url, { token: a.token })];
    for (const w of watchers) await w.join({ role: 'observer' });
    const unrelated = await TestClient.connect(url, { token: b.token });
    await unrelated.join({ role: 'observer' });

    const t0 = Date.now();
    expect((await rest(`/${id}/shares/${a.share_id}`, alice.token, { method: 'DELETE' })).status).toBe(204);
    for (const w of watchers) {
      expect((await w.waitForClose(2000)).code).toBe(4401);
      expect(w.frames().at(-1)!.payload).toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/revoked/) });
    }
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(await TestClient.refusedStatus(url, { token: a.token })).toBe(401);
    expect((await rest(`/${id}`, a.token)).status).toBe(401);
    expect((await rest(`/${id}/shares/${a.share_id}`, alice.token, { method: 'DELETE' })).status).toBe(404);
    // The other share and the controller are untouched.
    expect(unrelated.closed).toBeNull();
    ctl.send('pty.session_input', { data: b64('echo still-$((1+1))\r') });
    await unrelated.waitForOutput('still-2');
    const after = (await (await rest(`/${id}/shares`, alice.token)).json()) as { shares: Array<{ label: string }> };
    expect(after.shares.map((s) => s.label)).toEqual(['b']);
    unrelated.close();
    ctl.close();
  });

  it("a share minted with a share ends with it: revoking the pair link ends its children's connections and tokens", async () => {
    const { id, url, ctl } = await running();
    const pair = await mint(id, alice.token, { scope: 'pty:control', expires_in: 600, label: 'pair' });
    const child = await mint(id, pair.token, { scope: 'pty:control', label: 'child' });
    const grandchild = await mint(id, child.token, { label: 'grandchild' });
    const other = await mint(id, alice.token, { label: 'other' });
    const typist = await TestClient.connect(url, { token: child.token });
    await typist.join({ role: 'controller' });
    const watcher = await TestClient.connect(url, { token: grandchild.token });
    await watcher.join({ role: 'observer' });

    expect((await rest(`/${id}/shares/${pair.share_id}`, alice.token, { method: 'DELETE' })).status).toBe(204);
    for (const c of [typist, watcher]) {
      expect((await c.waitForClose(2000)).code).toBe(4401);
      expect(c.frames().at(-1)!.payload).toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/revoked/) });
    }
    for (const s of [child, grandchild]) {
      expect((await rest(`/${id}`, s.token)).status, s.label!).toBe(401);
      expect(await TestClient.refusedStatus(url, { token: s.token }), s.label!).toBe(401);
    }
    const left = (await (await rest(`/${id}/shares`, alice.token)).json()) as { shares: Array<{ label: string }> };
    expect(left.shares.map((s) => s.label)).toEqual(['other']);
    expect((await rest(`/${id}`, other.token)).status).toBe(200);
    ctl.close();
  });

  it('a session has at most MAX_ACTIVE_SHARES active links: one more is 429 until one is revoked', async () => {
    const { id, ctl } = await running();
    const minted = await Promise.all(Array.from({ length: MAX_ACTIVE_SHARES }, (_, i) => rest(`/${id}/shares`, alice.token, { method: 'POST', body: JSON.stringify({ label: `l${i}` }) })));
    expect(minted.map((r) => r.status)).toEqual(minted.map(() => 201));
    const over = await rest(`/${id}/shares`, alice.token, { method: 'POST', body: '{}' });
    expect(over.status).toBe(429);
    expect(((await over.json()) as { error: { message: string } }).error.message).toMatch(/at most 100\): revoke some first/);
    const first = (await minted[0]!.json()) as Minted;
    expect((await rest(`/${id}/shares/${first.share_id}`, alice.token, { method: 'DELETE' })).status).toBe(204);
    await mint(id, alice.token);
    ctl.close();
  });

  it('an expiring share ends its connection when it expires', async () => {
    const { id, url, ctl } = await running();
    const share = await mint(id, alice.token, { expires_in: 1 });
    const w = await TestClient.connect(url, { token: share.token });
    await w.join({ role: 'observer' });
    expect((await w.waitForClose(3000)).code).toBe(4401);
    expect(await TestClient.refusedStatus(url, { token: share.token })).toBe(401);
    ctl.close();
  });

  it('survives a restart: only the hash is stored, and the token still works', async () => {
    const { id, url, ctl } = await running();
    const share = await mint(id, alice.token);
    ctl.close();
    await server.stop({ keepDir: true });
    server = await startTestServer(env(), {}, { dir: stateDir });
    for (const f of readdirSync(stateDir).filter((n) => n.startsWith('pty-ws.db'))) expect(readFileSync(join(stateDir, f)).includes(share.token)).toBe(false);
    const w = await TestClient.connect(url.replace(/:\d+\//, `:${new URL(server.origin).port}/`), { token: share.token });
    const flush = await w.join({ role: 'observer' });
    expect(flush.find((f) => f.payload.kind === 'RoleAssigned')!.payload.role).toBe('observer');
    w.close();
  });
});
