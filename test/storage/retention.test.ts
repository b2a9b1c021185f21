// What the database keeps beyond the replay floor (docs/operations.md, "Disk"): ended sessions go
// after their retention, each log stays within its byte budget, all logs within theirs (ended
// sessions' first), and a creation past the budget is refused by name. Real router, real libSQL file.
import type { Client } from '@libsql/client';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/core/config.ts';
import { TestClient } from '../helpers/client.ts';
import { until } from '../helpers/processes.ts';
import { Rest } from '../helpers/rest.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndDatabase } from '../helpers/server-database.ts';

const servers = serverAndDatabase();

async function start(overrides: Partial<Config>): Promise<{ s: TestServer; rest: Rest; database: Client }> {
  const { server, db } = await servers.start({}, {}, { overrides });
  return { s: server, rest: new Rest(server.origin, server.devToken), database: db };
}

/** Runs `command` in a new session with a client joined until it ends; resolves with the session id. */
async function runToEnd(s: TestServer, command: string): Promise<string> {
  const { session_id: id } = await s.createSession({ command });
  const c = await TestClient.connect(s.attachUrl(id), { token: s.devToken });
  await c.join({ role: 'controller' });
  await c.waitForFrame((f) => f.payload.kind === 'Closed', 'the session to end', 30_000);
  c.close();
  return id;
}

async function logRows(database: Client, id: string): Promise<{ rows: number; bytes: number; counted: number }> {
  const { rows } = await database.execute({ sql: 'select count(*) as n, coalesce(sum(length(frame) + coalesce(length(output), 0)), 0) as bytes from session_log where session_id = ?', args: [id] });
  // `select *`: a database without the column reads as -1, not as an error.
  const counted = await database.execute({ sql: 'select * from sessions where id = ?', args: [id] });
  return { rows: Number(rows[0]!.n), bytes: Number(rows[0]!.bytes), counted: Number(counted.rows[0]?.log_bytes ?? -1) };
}

/** About 2 MB of output. */
const FLOOD = 'head -c 1500000 /dev/zero | od -v -An -tx1 | head -c 2000000; echo; echo flood-done';

describe('retention beyond the replay floor', () => {
  it('deletes an ended session with its log once its retention has passed', { timeout: 60_000 }, async () => {
    const { s, rest, database } = await start({ endedRetentionSeconds: 3, retentionSweepMs: 200 });
    const id = await runToEnd(s, 'echo goodbye');
    await s.hub.deps.store.flush();
    expect((await logRows(database, id)).rows).toBeGreaterThan(0);
    expect((await rest.request('GET', `/${id}`)).status).toBe(200);
    await until(async () => (await rest.request('GET', `/${id}`)).status === 404, 'the ended session to be deleted', 20_000);
    expect((await logRows(database, id)).rows).toBe(0);
    expect(s.logs.some((l) => l.includes('retention: deleted what is kept no longer'))).toBe(true);
  });

  it("cuts a session's log to its byte budget, and counts its bytes as the rows hold them", { timeout: 60_000 }, async () => {
    const budget = 256 * 1024;
    const { s, database } = await start({ sessionLogBudgetBytes: budget, retentionSweepMs: 200 });
    const { session_id: id } = await s.createSession({ command: `${FLOOD}; sleep 60` });
    const c = await TestClient.connect(s.attachUrl(id), { token: s.devToken });
    await c.join({ role: 'controller' });
    await c.waitForOutput('flood-done', 30_000);
    await s.hub.deps.store.flush();
    await until(async () => (await logRows(database, id)).bytes <= budget, 'the log to be cut to its budget', 20_000);
    const after = await logRows(database, id);
    expect(after.rows).toBeGreaterThan(0);
    expect(after.counted).toBe(after.bytes);
    // What went is out of the replay's reach, said as usual.
    const late = await TestClient.connect(s.attachUrl(id), { token: s.devToken });
    late.send('pty.join_session', { role: 'observer' }, { replay_from: 0 });
    const refused = await late.waitForFrame((f) => f.op === 'Error', 'REPLAY_OUT_OF_RANGE');
    expect(refused.payload.code).toBe('REPLAY_OUT_OF_RANGE');
    c.close();
    late.close();
  });

  it('keeps all logs within their budget, ended sessions first, and refuses a creation past it by name', { timeout: 60_000 }, async () => {
    // No periodic sweep: only the one at start and the one a refusal asks for.
    const { s, rest, database } = await start({ logBudgetBytes: 512 * 1024, retentionSweepMs: 3_600_000 });
    const ended = await runToEnd(s, FLOOD);
    await s.hub.deps.store.flush();
    expect((await logRows(database, ended)).bytes).toBeGreaterThan(512 * 1024);

    const refused = await rest.request('POST', '', { label: 'past the budget' });
    expect(refused.status).toBe(507);
    expect(refused.json.error).toMatchObject({ code: 'log_budget_exceeded', message: expect.stringContaining('PTY_WS_LOG_BUDGET_BYTES') });
    // The refusal started a sweep: the ended session's log goes, its record stays, creations work again.
    await until(async () => (await rest.request('POST', '', { label: 'after the sweep' })).status === 201, 'a creation to be taken again', 20_000);
    expect((await logRows(database, ended)).rows).toBe(0);
    expect((await rest.request('GET', `/${ended}`)).status).toBe(200);
  });
});
