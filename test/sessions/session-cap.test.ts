// PTY_WS_MAX_SESSIONS_PER_PRINCIPAL on every way a session is made (docs/security.md, "Sessions per
// principal"): REST, both standard A2A bindings of the instance and of the fleet agent, driven by
// the official SDK client (@a2a-js/sdk) against the real router, PTY host and libSQL file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';
import { a2aClient, send, stateName, userText, type Transport } from '../helpers/a2a.ts';

const CAP = 3;
const control = (principal: string): TestToken => ({ token: newToken(), principal, scopes: ['pty:control'] });
const agents = [
  { name: 'instance JSON-RPC', who: control('ana'), path: '', transport: 'JSONRPC' },
  { name: 'instance HTTP+JSON', who: control('ben'), path: '', transport: 'HTTP+JSON' },
  { name: 'fleet JSON-RPC', who: control('fay'), path: '/fleet/', transport: 'JSONRPC' },
  { name: 'fleet HTTP+JSON', who: control('gus'), path: '/fleet/', transport: 'HTTP+JSON' },
] as const;
const cy = control('cy');

let server: TestServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-session-cap-'));
  writeTokenFile(join(dir, 'tokens.json'), [...agents.map((a) => a.who), cy]);
  server = await startTestServer({ PTY_WS_TOKENS_FILE: join(dir, 'tokens.json'), PTY_WS_MAX_SESSIONS_PER_PRINCIPAL: String(CAP) });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const sessionsUrl = () => `${server.origin}/agents/${server.config.instanceId}/sessions`;
const restCreate = (t: TestToken, label: string) =>
  fetch(sessionsUrl(), { method: 'POST', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ label }) });
/** The sessions of this instance carrying `label` (each test gives its principal's sessions their own). */
const labelled = async (label: string) => {
  const res = await fetch(sessionsUrl(), { headers: { authorization: `Bearer ${cy.token}` } });
  return ((await res.json()) as { sessions: Array<{ session_id: string; label: string | null }> }).sessions.filter((s) => s.label === label);
};
const message = (text: string, label: string) => send({ message: userText(text, { metadata: { 'pty-ws/session': { label } } }) });
/** What the PTY host runs: a refused creation must add nothing here. */
const hostSessions = async () => (await server.hub.deps.pty.list()).length;

/** The refusal is A2A's rate-limit error on either binding: -32052 (DECISIONS §19) with reason RATE_LIMITED, or HTTP 429. */
function expectRateLimited(e: unknown, transport: Transport): void {
  expect(e, 'refused').toBeInstanceOf(Error);
  const err = e as { envelopeCode?: number; data?: Array<{ reason: string }>; statusCode?: number; message: string };
  if (transport === 'JSONRPC') {
    expect(err.envelopeCode).toBe(-32052);
    expect(err.data?.[0]?.reason).toBe('RATE_LIMITED');
  } else {
    expect(err.statusCode).toBe(429);
  }
  expect(err.message).toContain(`PTY_WS_MAX_SESSIONS_PER_PRINCIPAL=${CAP}`);
}

describe.each(agents)('SendMessage without contextId on the $name', ({ who, path, transport }) => {
  let client: Client;
  beforeAll(async () => {
    client = await a2aClient(`${server.origin}${path}`, who.token, transport);
  });

  it(`starts ${CAP} sessions of 10 asked for, refuses the rest as rate-limited without starting a shell, and REST counts them too`, async () => {
    const label = `cap-${who.principal}`;
    const before = await hostSessions();
    const outcomes: unknown[] = [];
    for (let i = 0; i < 10; i++) outcomes.push(await client.sendMessage(message(`echo made-${i}`, label)).catch((e: unknown) => e));
    const done = outcomes.filter((o) => !(o instanceof Error));
    expect(done.map((t) => 'status' in (t as object) && stateName((t as { status?: { state: number } }).status?.state))).toEqual(Array.from({ length: CAP }, () => 'TASK_STATE_COMPLETED'));
    for (const refused of outcomes.slice(CAP)) expectRateLimited(refused, transport);
    expect(await labelled(label)).toHaveLength(CAP);
    expect(await hostSessions()).toBe(before + CAP);
    // The same count stops REST: the A2A sessions are this principal's.
    const rest = await restCreate(who, label);
    expect(rest.status).toBe(429);
    expect(await labelled(label)).toHaveLength(CAP);
  }, 60_000);
});

describe('concurrent creations on every route', () => {
  it(`never pass the cap together: REST and both A2A bindings at once make exactly ${CAP}`, async () => {
    const label = 'cap-cy';
    const [rpc, rest] = await Promise.all([a2aClient(server.origin, cy.token, 'JSONRPC'), a2aClient(server.origin, cy.token, 'HTTP+JSON')]);
    const asks = Array.from({ length: 4 }, (_, i) => [
      restCreate(cy, label).then((r) => (r.status === 201 ? 'made' : r.status)),
      rpc.sendMessage(message(`echo rpc-${i}`, label)).then(() => 'made', (e: unknown) => e),
      rest.sendMessage(message(`echo rest-${i}`, label)).then(() => 'made', (e: unknown) => e),
    ]).flat();
    const outcomes = await Promise.all(asks);
    expect(outcomes.filter((o) => o === 'made')).toHaveLength(CAP);
    expect(outcomes.filter((o) => o === 429 || (o instanceof Error && /PTY_WS_MAX_SESSIONS_PER_PRINCIPAL/.test(o.message)))).toHaveLength(12 - CAP);
    expect(await labelled(label)).toHaveLength(CAP);
  }, 60_000);
});
