// A share holds only while its root minter's token does (docs/sharing.md), against the real
// router, PTY host, shell and libSQL file: after the minter's token map entry is removed and the
// map reloaded (SIGHUP), its shares' open connections close 4401 and the tokens are refused; and
// every share of a principal is revoked at once, over REST and with `pty-ws share --revoke-all`.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';

const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;
const alice: TestToken = { token: newToken(), principal: 'alice', scopes: ['pty:control'] };
const kim: TestToken = { token: newToken(), principal: 'kim', scopes: ['pty:control'] };
const mal: TestToken = { token: newToken(), principal: 'mal', scopes: ['pty:control'] };
const cal: TestToken = { token: newToken(), principal: 'cal', scopes: ['pty:control'] };
const ned: TestToken = { token: newToken(), principal: 'ned', scopes: ['pty:control'] };
const root: TestToken = { token: newToken(), principal: 'root', scopes: ['pty:admin'] };
const narrowAdmin: TestToken = { token: newToken(), principal: 'narrow', scopes: ['pty:admin'], sessions: ['0192f000-0000-7000-8000-000000000000'] };

let dir: string;
let server: TestServer;
const tokensFile = () => join(dir, 'tokens.json');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-share-minters-'));
  writeTokenFile(tokensFile(), [alice, kim, mal, ned, cal, root, narrowAdmin]);
  server = await startTestServer({ PTY_WS_TOKENS_FILE: tokensFile() });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const api = (path: string, token: string | null, init: RequestInit = {}) =>
  fetch(`${server.origin}/agents/${server.config.instanceId}${path}`, { ...init, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } });

async function mint(sessionId: string, token: string, body: Record<string, unknown> = {}): Promise<{ share_id: string; token: string }> {
  const res = await api(`/sessions/${sessionId}/shares`, token, { method: 'POST', body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { share_id: string; token: string };
}

async function session(token: string): Promise<{ id: string; url: string; ctl: TestClient }> {
  const s = await server.createSession({}, token);
  const ctl = await TestClient.connect(s.attach_url, { token });
  await ctl.join({ role: 'controller' });
  return { id: s.session_id, url: s.attach_url, ctl };
}

async function reload(tokens: TestToken[]): Promise<void> {
  writeTokenFile(tokensFile(), tokens);
  expect(await server.reloadTokens()).toBe(true);
}

describe("a share ends with its root minter's token", () => {
  it('removed from the token map and reloaded: its shares (and theirs) close 4401 at once and are refused; back again, they work', async () => {
    const { id, url, ctl } = await session(alice.token);
    const pair = await mint(id, alice.token, { scope: 'pty:control', expires_in: 604_800 });
    const child = await mint(id, pair.token, { label: 'child' });
    const kims = await mint(id, kim.token);
    const partner = await TestClient.connect(url, { token: pair.token });
    await partner.join({ role: 'controller' });
    partner.send('pty.session_input', { data: b64('echo typed-$((40+2))\r') });
    await ctl.waitForOutput('typed-42');
    const watcher = await TestClient.connect(url, { token: child.token });
    await watcher.join({ role: 'observer' });
    const bystander = await TestClient.connect(url, { token: kims.token });
    await bystander.join({ role: 'observer' });

    await reload([kim, mal, ned, cal, root, narrowAdmin]);
    for (const c of [partner, watcher]) {
      expect((await c.waitForClose(2000)).code).toBe(4401);
      expect(c.frames().at(-1)!.payload).toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/no longer authenticates/) });
    }
    for (const s of [pair, child]) {
      expect(await TestClient.refusedStatus(url, { token: s.token })).toBe(401);
      expect((await api(`/sessions/${id}`, s.token)).status).toBe(401);
    }
    // Another minter's share, and the minter's own open connection (docs/sharing.md), go on.
    expect(bystander.closed).toBeNull();
    expect((await api(`/sessions/${id}`, kims.token)).status).toBe(200);
    ctl.send('pty.session_input', { data: b64('echo still-$((1+1))\r') });
    await bystander.waitForOutput('still-2');

    // The same token back: the shares were refused, not revoked.
    await reload([alice, kim, mal, ned, cal, root, narrowAdmin]);
    expect((await api(`/sessions/${id}`, pair.token)).status).toBe(200);
    expect((await api(`/sessions/${id}`, child.token)).status).toBe(200);
    bystander.close();
    ctl.close();
  });

  it('narrowed to pty:observe: its pair share is refused (and closed), its watch share holds', async () => {
    const { id, url, ctl } = await session(alice.token);
    const pair = await mint(id, alice.token, { scope: 'pty:control' });
    const watch = await mint(id, alice.token);
    const partner = await TestClient.connect(url, { token: pair.token });
    await partner.join({ role: 'controller' });
    await reload([{ ...alice, scopes: ['pty:observe'] }, kim, mal, ned, cal, root, narrowAdmin]);
    expect((await partner.waitForClose(2000)).code).toBe(4401);
    expect((await api(`/sessions/${id}`, pair.token)).status).toBe(401);
    expect((await api(`/sessions/${id}`, watch.token)).status).toBe(200);
    await reload([alice, kim, mal, ned, cal, root, narrowAdmin]);
    ctl.close();
  });
});

describe('DELETE /agents/{instance}/shares revokes every share of a principal', () => {
  it("the caller's own by default; another principal's with unrestricted pty:admin only; connections close 4401", async () => {
    const one = await session(mal.token);
    const two = await session(mal.token);
    const a = await mint(one.id, mal.token, { scope: 'pty:control' });
    const b = await mint(two.id, mal.token);
    const fromShare = await mint(one.id, a.token);
    const neds = await mint(one.id, ned.token);
    const open = await TestClient.connect(one.url, { token: fromShare.token });
    await open.join({ role: 'observer' });

    // Only its own: without pty:admin (or with it restricted to some sessions) no other principal's.
    expect((await api('/shares?principal=mal', ned.token, { method: 'DELETE' })).status).toBe(403);
    expect((await api('/shares?principal=mal', narrowAdmin.token, { method: 'DELETE' })).status).toBe(403);
    expect((await api('/shares', null, { method: 'DELETE' })).status).toBe(401);
    expect((await api('/shares?principal=', root.token, { method: 'DELETE' })).status).toBe(400);
    expect((await fetch(`${server.origin}/agents/elsewhere/shares`, { method: 'DELETE', headers: { authorization: `Bearer ${mal.token}` } })).status).toBe(404);
    expect((await api(`/sessions/${one.id}`, a.token)).status).toBe(200);

    const res = await api('/shares', mal.token, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ revoked: 2 });
    expect((await open.waitForClose(2000)).code).toBe(4401);
    for (const s of [a, b, fromShare]) expect((await api(`/sessions/${one.id}`, s.token)).status).toBe(401);
    expect((await api(`/sessions/${one.id}`, neds.token)).status).toBe(200);

    const byAdmin = await api('/shares?principal=ned', root.token, { method: 'DELETE' });
    expect(await byAdmin.json()).toEqual({ revoked: 1 });
    expect((await api(`/sessions/${one.id}`, neds.token)).status).toBe(401);
    expect(await (await api('/shares?principal=nobody', root.token, { method: 'DELETE' })).json()).toEqual({ revoked: 0 });
    one.ctl.close();
    two.ctl.close();
  });

  it('pty-ws share --revoke-all [--principal P]', { timeout: 60_000 }, async () => {
    const { id, ctl } = await session(cal.token);
    const mine = [await mint(id, cal.token), await mint(id, cal.token)];
    const cli = (args: string[], token: string) =>
      promisify(execFile)(process.execPath, [BIN, 'share', ...args], { env: { PATH: process.env.PATH, HOME: dir, PTY_WS_URL: server.origin, PTY_WS_TOKEN: token } }).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
      );
    const refused = await cli(['--revoke-all', '--principal', 'cal'], mal.token);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/403/);
    expect((await api(`/sessions/${id}`, mine[0]!.token)).status).toBe(200);
    const done = await cli(['--revoke-all', '--principal', 'cal'], root.token);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.trim()).toBe('2 share links revoked (minted by cal)');
    for (const s of mine) expect((await api(`/sessions/${id}`, s.token)).status).toBe(401);
    const own = await cli(['--revoke-all'], cal.token);
    expect(own.stdout.trim()).toBe('0 share links revoked');
    ctl.close();
  });
});
