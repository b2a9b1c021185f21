// A2A streams held open count with attaches against PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL (docs/
// protocol.md §1.6), against the real router: before, SubscribeToTask streams had no limit, and one
// principal could hold open every file descriptor the router had (a review: 20,000 streams; then
// nobody's REST call or attach got through).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userText } from '../helpers/a2a.ts';
import { TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';

const alice: TestToken = { token: newToken(), principal: 'alice', scopes: ['pty:control'] };
const bob: TestToken = { token: newToken(), principal: 'bob', scopes: ['pty:control'] };
const LIMIT = 3;

let dir: string;
let server: TestServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-stream-admission-'));
  writeTokenFile(join(dir, 'tokens.json'), [alice, bob]);
  server = await startTestServer({ PTY_WS_TOKENS_FILE: join(dir, 'tokens.json'), PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL: String(LIMIT) });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const instance = () => `${server.origin}/agents/${server.config.instanceId}`;
const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

describe('A2A streams and attaches share the per-principal limit', () => {
  it('refuses a stream past it with 429 (REST) or RATE_LIMITED (JSON-RPC), and admits again once one ends', async () => {
    const sent = await fetch(`${instance()}/a2a/rest/message:send`, { method: 'POST', headers: headers(alice.token), body: JSON.stringify({ message: userText('sleep 30'), configuration: { returnImmediately: true } }) });
    const { task } = (await sent.json()) as { task: { id: string; contextId: string } };
    const subscribe = (token = alice.token) => {
      const abort = new AbortController();
      return { abort, res: fetch(`${instance()}/a2a/rest/tasks/${task.id}:subscribe`, { headers: headers(token), signal: abort.signal }) };
    };
    const open = [subscribe(), subscribe(), subscribe()];
    for (const s of open) expect((await s.res).status).toBe(200);

    const over = await subscribe().res;
    expect(over.status).toBe(429);
    expect(await over.text()).toMatch(/PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL=3/);
    const rpc = await fetch(`${instance()}/a2a/jsonrpc`, { method: 'POST', headers: headers(alice.token), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: task.id } }) });
    expect(((await rpc.json()) as { error: { data: Array<{ reason: string }> } }).error.data[0]!.reason).toBe('RATE_LIMITED');
    // An attach counts against the same limit; another principal is not held up by alice's.
    expect(await TestClient.refusedStatus(server.attachUrl(task.contextId), { token: alice.token })).toBe(429);
    const theirs = subscribe(bob.token);
    expect((await theirs.res).status).toBe(200);

    // A reader that goes away frees its place.
    open[0]!.abort.abort();
    await expect.poll(async () => {
      const again = subscribe();
      const status = (await again.res).status;
      again.abort.abort();
      return status;
    }).toBe(200);
    for (const s of [...open, theirs]) s.abort.abort();
  });
});
