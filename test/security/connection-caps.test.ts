// Who may hold the instance's connections (docs/security.md, attack 8), against the real router:
// a share's attaches count against its root minter as well as the share, and the last places of
// PTY_WS_MAX_CONNECTIONS_PER_INSTANCE are kept for pty:admin. Before, each share was a principal of
// its own: 17 watch shares × 16 sockets took all 256 places and the admin's attach got 429.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';

const token = (principal: string, scope: string): TestToken => ({ token: newToken(), principal, scopes: [scope] });
const alice = token('alice', 'pty:control');
const admin = token('root', 'pty:admin');
const others = Array.from({ length: 4 }, (_, i) => token(`user${i}`, 'pty:observe'));
const PER_PRINCIPAL = 4;
const PER_INSTANCE = 10;
const RESERVED = 2;

let dir: string;
let server: TestServer;
let session: { session_id: string; attach_url: string };
const open: TestClient[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-connection-caps-'));
  writeTokenFile(join(dir, 'tokens.json'), [alice, admin, ...others]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// A server per test: a closed attach frees its place a moment after the client sees it close, and
// each test counts the places exactly.
beforeEach(async () => {
  server = await startTestServer({
    PTY_WS_TOKENS_FILE: join(dir, 'tokens.json'),
    PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL: String(PER_PRINCIPAL),
    PTY_WS_MAX_CONNECTIONS_PER_INSTANCE: String(PER_INSTANCE),
    PTY_WS_ADMIN_RESERVED_CONNECTIONS: String(RESERVED),
  });
  session = await server.createSession({ command: '/bin/sh' }, alice.token);
});
afterEach(async () => {
  const all = open.splice(0);
  for (const c of all) c.close();
  await Promise.all(all.map((c) => c.waitForClose()));
  await server?.stop();
});

const OPEN = 101;

/** Attaches and keeps the attach open (OPEN), or answers the HTTP status it was refused with. */
async function attach(bearer: string): Promise<number> {
  try {
    open.push(await TestClient.connect(session.attach_url, { token: bearer }));
    return OPEN;
  } catch (e) {
    const status = /^HTTP (\d+)$/.exec((e as Error).message)?.[1];
    if (status === undefined) throw e;
    return Number(status);
  }
}

async function mint(bearer: string, scope = 'pty:observe'): Promise<string> {
  const res = await fetch(`${server.origin}/agents/${server.config.instanceId}/sessions/${session.session_id}/shares`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ scope }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

describe('connection limits', () => {
  it("counts a share's attaches against its root minter: shares of one minter cannot hold more than the minter may", async () => {
    const watches = [await mint(alice.token), await mint(alice.token), await mint(alice.token)];
    const pair = await mint(alice.token, 'pty:control');
    const fromPair = await mint(pair, 'pty:observe');

    expect(await attach(alice.token)).toBe(OPEN);
    expect(await attach(watches[0]!)).toBe(OPEN);
    const first = open.at(-1)!;
    expect(await attach(watches[0]!)).toBe(OPEN);
    expect(await attach(watches[1]!)).toBe(OPEN);
    // alice and her shares now hold PER_PRINCIPAL: no other share of hers gets in, nor one minted
    // with one of them, nor alice herself; someone else does.
    const refused = [];
    for (const bearer of [watches[2]!, watches[1]!, pair, fromPair, alice.token]) refused.push(await attach(bearer));
    expect(refused).toEqual([429, 429, 429, 429, 429]);
    expect(await attach(others[0]!.token)).toBe(OPEN);

    // A share's closed attach frees the minter's place.
    first.close();
    await first.waitForClose();
    await expect.poll(() => attach(fromPair)).toBe(OPEN);
  });

  it('keeps the last places of the instance for pty:admin: an admin gets in when everyone else is refused', async () => {
    // Fill the instance with non-admin principals until it refuses them.
    const statuses: number[] = [];
    for (const who of others) for (let i = 0; i < PER_PRINCIPAL && !statuses.includes(429); i++) statuses.push(await attach(who.token));
    expect(statuses).toEqual([...Array<number>(PER_INSTANCE - RESERVED).fill(OPEN), 429]);

    const admins: number[] = [];
    for (let i = 0; i <= RESERVED; i++) admins.push(await attach(admin.token));
    expect(admins).toEqual([...Array<number>(RESERVED).fill(OPEN), 429]);
  });
});
