// The Node router's log committer: group commits in a worker thread with its own connection to the
// database file, against a real libSQL file. Every worker it starts is recorded, so a test can kill
// one and check that close() leaves none running.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { createClient, type Client } from '@libsql/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { logCommitWorker, nodeLogCommitterFor, WorkerLogCommitter } from '../../src/adapter/node/worker-log-committer.ts';
import type { Logger } from '../../src/ports/logger.ts';
import { inThreadLogCommitter, type LogDatabase, type LogStatement } from '../../storage/log-committer.ts';
import { openStore } from '../../storage/open.ts';
import type { LibsqlStore } from '../../storage/store.ts';

let dir: string;
let db: LogDatabase;
let lines: Array<{ level: string; msg: string; fields: Record<string, unknown> | undefined }>;
let workers: Array<{ worker: Worker; exited: boolean }>;
const cleanups: Array<() => unknown> = [];

const logger: Logger = { log: (level, msg, fields) => void lines.push({ level, msg, fields }), child: () => logger };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pty-ws-log-worker-'));
  db = { url: `file:${join(dir, 'test.db')}`, busyTimeoutMs: 5000 };
  lines = [];
  workers = [];
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await rm(dir, { recursive: true, force: true });
});

/** A store over the file whose log commits run in recorded workers, as the Node router's do. */
async function openWithWorker(): Promise<LibsqlStore> {
  const store = await openStore({ url: db.url, logger, logCommitterFor: (opened) => WorkerLogCommitter.start(() => recordedWorker(opened), logger) });
  cleanups.push(() => store.close().catch(() => undefined));
  return store;
}

function recordedWorker(opened: LogDatabase): Worker {
  const worker = logCommitWorker(opened);
  const record = { worker, exited: false };
  worker.once('exit', () => (record.exited = true));
  workers.push(record);
  return worker;
}

/** A committer on its own, over a migrated file that has a `probe` table to write to. */
async function committerOverProbe(): Promise<{ committer: WorkerLogCommitter; client: Client }> {
  await (await openStore({ url: db.url })).close();
  const client = createClient({ url: db.url });
  cleanups.push(() => client.close());
  await client.execute('create table probe (v integer not null)');
  const committer = WorkerLogCommitter.start(() => recordedWorker(db), logger);
  cleanups.push(() => committer.close());
  return { committer, client };
}

async function probeValues(client: Client): Promise<number[]> {
  const { rows } = await client.execute('select v from probe order by rowid');
  return rows.map((r) => Number(r.v));
}

function frame(sequence: number): { sessionId: string; sequence: number; kind: string; createdAt: number; frame: string } {
  return { sessionId: 's1', sequence, kind: 'Output', createdAt: 1_000_000 + sequence, frame: JSON.stringify({ sequence, data: `chunk ${sequence}` }) };
}

describe('the worker log committer', () => {
  it("commits the store's log rows and current_sequence where the store's own client sees them", async () => {
    const store = await openWithWorker();
    await store.createSession({
      id: 's1', instanceId: 'local', backend: 'native', sessionClass: 'interactive', argv: ['sh'], command: null, cwd: '/', env: {},
      cols: 80, rows: 24, label: null, state: 'running', createdAt: '2026-01-01T00:00:00.000Z', closedAt: null, exitCode: null, closeReason: null, createdBy: null, hadMember: false, createdVia: null,
  host: null,
    });
    for (let sequence = 1; sequence <= 1200; sequence++) store.appendLog(frame(sequence));
    await store.flush();
    // Read past the queue: through a second connection, and the store's reads once nothing is queued.
    const client = createClient({ url: db.url });
    cleanups.push(() => client.close());
    const { rows } = await client.execute("select count(*) as n, max(sequence) as last from session_log where session_id = 's1'");
    expect(rows[0]).toMatchObject({ n: 1200, last: 1200 });
    const { rows: session } = await client.execute("select current_sequence from sessions where id = 's1'");
    expect(session[0]?.current_sequence).toBe(1200);
    expect((await store.readLog('s1', 1190)).map((e) => e.sequence)).toEqual([1191, 1192, 1193, 1194, 1195, 1196, 1197, 1198, 1199, 1200]);
    expect(workers).toHaveLength(1);
  });

  it("commits on a connection with synchronous=NORMAL and the store's busy timeout", async () => {
    const { committer, client } = await committerOverProbe();
    // The pragma functions read the committing connection's own settings.
    await committer.commit([
      { sql: 'insert into probe select synchronous from pragma_synchronous', args: [] },
      { sql: 'insert into probe select timeout from pragma_busy_timeout', args: [] },
    ]);
    expect(await probeValues(client)).toEqual([1, 5000]);
  });

  it('rejects a failing commit with the error the same batch gets on the main thread, and commits nothing of it', async () => {
    const { committer, client } = await committerOverProbe();
    const failing: LogStatement[] = [
      { sql: 'insert into probe values (?)', args: [1] },
      { sql: 'insert into probe values (?)', args: [null] },
    ];
    const inWorker = await committer.commit(failing).then(() => null, (e: unknown) => e);
    const inThread = await inThreadLogCommitter(client).commit(failing).then(() => null, (e: unknown) => e);
    expect(inThread).toMatchObject({ message: expect.stringContaining('NOT NULL constraint failed: probe.v'), code: 'SQLITE_CONSTRAINT' });
    const fields = (e: unknown) => {
      const { name, message, code, extendedCode, rawCode } = e as Record<string, unknown>;
      return { name, message, code, extendedCode, rawCode };
    };
    expect(fields(inWorker)).toEqual(fields(inThread));
    expect(inWorker).toBeInstanceOf(Error);
    // Its stack is the worker's, where libSQL threw: what a log line of it shows.
    expect((inWorker as Error).stack).toMatch(/^\w*Error: .*NOT NULL constraint failed/);
    expect((inWorker as Error).stack).not.toContain('worker-log-committer');
    expect(await probeValues(client)).toEqual([]);
    // The worker's connection is fine after a failure.
    await committer.commit([{ sql: 'insert into probe values (?)', args: [2] }]);
    expect(await probeValues(client)).toEqual([2]);
  });

  it('a worker killed mid-commit fails that commit, and the next commit starts a new worker and succeeds', async () => {
    const { committer, client } = await committerOverProbe();
    await committer.commit([{ sql: 'insert into probe values (?)', args: [1] }]);
    // A transaction that holds the write lock for a while (counting to a few million).
    const slow = committer.commit([
      { sql: 'insert into probe values (?)', args: [2] },
      { sql: 'insert into probe select count(*) from (with recursive n(x) as (select 1 union all select x + 1 from n where x < 3000000) select x from n)', args: [] },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await workers[0]!.worker.terminate();
    await expect(slow).rejects.toThrow(/log commit worker exited/);

    // The dead worker's transaction did not leave the write lock taken: the next commit would wait
    // out the 5 s busy timeout and fail. (Not timed here: starting the new worker alone can take
    // seconds on a loaded machine.)
    await committer.commit([{ sql: 'insert into probe values (?)', args: [3] }]);
    expect(workers).toHaveLength(2);
    expect(await probeValues(client)).toEqual([1, 3]);
    await client.execute('insert into probe values (4)');
    const stopped = lines.filter((l) => l.msg.includes('log commit worker stopped'));
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatchObject({ level: 'error', fields: { pendingCommits: 1 } });
  });

  it('close() waits for the commits sent before it and leaves no thread running', async () => {
    const store = await openWithWorker();
    const { committer, client } = await committerOverProbe();
    const commits = [1, 2, 3].map((v) => committer.commit([{ sql: 'insert into probe values (?)', args: [v] }]));
    await committer.close();
    await Promise.all(commits);
    expect(await probeValues(client)).toEqual([1, 2, 3]);
    await expect(committer.commit([{ sql: 'insert into probe values (4)', args: [] }])).rejects.toThrow(/closed/);

    store.appendLog(frame(1));
    await store.close();
    expect(workers).toHaveLength(2);
    expect(workers.map((w) => w.exited)).toEqual([true, true]);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('is what the Node router uses for a file database, and not for a remote one', async () => {
    const forUrl = nodeLogCommitterFor(logger);
    expect(forUrl({ url: 'http://127.0.0.1:1', busyTimeoutMs: 5000 })).toBeUndefined();
    const committer = forUrl(db);
    expect(committer).toBeInstanceOf(WorkerLogCommitter);
    await committer!.close();
  });
});
