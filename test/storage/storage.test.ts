import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type Client } from '@libsql/client';
import { drizzle } from 'drizzle-orm/libsql';
import { migrate } from 'drizzle-orm/libsql/migrator';
import { describe, expect, it, vi } from 'vitest';
import type { LogEntry } from '../../src/protocol/logged-frames.ts';
import type { Logger, LogLevel } from '../../src/ports/logger.ts';
import type { LogLoss, SessionRecord } from '../../src/ports/store.ts';
import { migrationsFolder } from '../../storage/migrate.ts';
import { StoreOpenError } from '../../storage/open-error.ts';
import { openStore, type OpenStoreOptions } from '../../storage/open.ts';
import { mergeBySequence } from '../../storage/pending-log.ts';
import { OutputFrame, outputEntry } from '../../src/protocol/output-frame.ts';
import type { LibsqlStore } from '../../storage/store.ts';
import { freePort } from '../helpers/processes.ts';
import { tempDatabase } from '../helpers/temp-database.ts';

const db = tempDatabase('pty-ws-storage-');
const { open, rawClient } = db;

async function count(client: Client, sessionId: string): Promise<number> {
  const { rows } = await client.execute({ sql: 'select count(*) as n from session_log where session_id = ?', args: [sessionId] });
  return Number(rows[0]?.n);
}

function session(id: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    instanceId: 'local',
    backend: 'native',
    sessionClass: 'interactive',
    argv: ['bash', '-l', 'with "quotes" and ünïcode'],
    command: null,
    cwd: '/tmp',
    env: { TERM: 'xterm-256color', EMPTY: '' },
    cols: 80,
    rows: 24,
    label: 'build',
    state: 'created',
    createdAt: '2026-01-01T00:00:00.000Z',
    closedAt: null,
    exitCode: null,
    closeReason: null,
    createdBy: 'alice',
    hadMember: false,
    createdVia: null,
  host: null,
    ...overrides,
  };
}

function frame(sessionId: string, sequence: number, createdAt = 1_000_000): LogEntry {
  return {
    sessionId,
    sequence,
    kind: 'Output',
    createdAt,
    frame: JSON.stringify({ op: 'pty.session_frame', sequence, payload: { kind: 'Output', data: `chunk ${sequence}` } }),
  };
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function recordingLogger(records: Array<{ level: LogLevel; msg: string }>): Logger {
  const logger: Logger = {
    log: (level, msg) => void records.push({ level, msg }),
    child: () => logger,
  };
  return logger;
}

interface Journal {
  entries: Array<{ idx: number; tag: string; when: number }>;
}

const journal = (): Journal => JSON.parse(readFileSync(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as Journal;

/** Tables, columns and indexes, as SQLite describes them: what two databases must agree on. */
async function schemaOf(client: Client): Promise<Record<string, unknown>> {
  const { rows: tables } = await client.execute("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name <> '__drizzle_migrations' order by name");
  const out: Record<string, unknown> = {};
  for (const { name } of tables) {
    const columns = await client.execute(`select name, type, "notnull", dflt_value, pk from pragma_table_info('${String(name)}') order by cid`);
    const indexes = await client.execute(`select name, "unique" from pragma_index_list('${String(name)}') order by name`);
    out[String(name)] = { columns: columns.rows.map((r) => ({ ...r })), indexes: indexes.rows.map((r) => ({ ...r })) };
  }
  return out;
}

describe('migrations', () => {
  it('apply idempotently on an empty database, and a reopened database keeps its rows', async () => {
    const first = await open();
    await first.createSession(session('s1'));
    first.appendLog(frame('s1', 1));
    await first.close();

    await open(); // migrates again over a migrated database
    const reopened = await open();
    expect(await reopened.getSession('local', 's1')).toEqual(session('s1'));
    expect(await reopened.readLog('s1', 0)).toEqual([frame('s1', 1)]);

    const { rows } = await rawClient().execute('select count(*) as n from __drizzle_migrations');
    expect(Number(rows[0]?.n)).toBe(journal().entries.length);
  });

  it('bring a database made by the first schema version forward without losing rows', async () => {
    // The first version's migrations folder: its SQL file and a journal that ends with it, applied
    // by drizzle's migrator exactly as that version did at its start.
    const { entries, ...rest } = journal();
    const firstVersion = join(db.dir, 'migrations-v1');
    mkdirSync(join(firstVersion, 'meta'), { recursive: true });
    copyFileSync(join(migrationsFolder(), `${entries[0]!.tag}.sql`), join(firstVersion, `${entries[0]!.tag}.sql`));
    writeFileSync(join(firstVersion, 'meta', '_journal.json'), JSON.stringify({ ...rest, entries: [entries[0]] }));
    const old = rawClient();
    await migrate(drizzle(old), { migrationsFolder: firstVersion });

    // Rows as the first version wrote them, in its own columns.
    await old.execute({
      sql: `insert into sessions (id, instance_id, backend, session_class, argv, command, cwd, env, cols, rows, label, state, created_at, closed_at, exit_code, close_reason, created_by, current_sequence)
            values ('old', 'local', 'native', 'interactive', '["bash","-l"]', null, '/tmp', '{"TERM":"xterm"}', 80, 24, 'then', 'closed', '2026-01-01T00:00:00.000Z', '2026-01-01T01:00:00.000Z', 0, 'normal', 'alice', 3)`,
      args: [],
    });
    for (const entry of [1, 2, 3].map((n) => frame('old', n))) {
      await old.execute({ sql: 'insert into session_log (session_id, sequence, kind, created_at, frame) values (?, ?, ?, ?, ?)', args: [entry.sessionId, entry.sequence, entry.kind, entry.createdAt, entry.frame] });
    }
    await old.execute(`insert into tasks (id, context_id, state, status_timestamp, task, created_at, updated_at)
                       values ('t1', 'old', 'TASK_STATE_COMPLETED', '2026-01-01T00:00:00Z', '{"id":"t1"}', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`);

    const store = await open();
    expect(await store.getSession('local', 'old')).toMatchObject({
      id: 'old', argv: ['bash', '-l'], env: { TERM: 'xterm' }, label: 'then', state: 'closed', exitCode: 0, closeReason: 'normal', createdBy: 'alice',
    });
    expect(await store.readLog('old', 0)).toEqual([1, 2, 3].map((n) => frame('old', n)));
    expect(await store.lastSequence('old')).toBe(3);
    const { rows: tasks } = await old.execute('select id from tasks');
    expect(tasks.map((r) => r.id)).toEqual(['t1']);

    // Every later migration ran, once, and the result is the schema a new database gets.
    const { rows } = await old.execute('select count(*) as n from __drizzle_migrations');
    expect(Number(rows[0]?.n)).toBe(entries.length);
    const fresh = db.track(createClient({ url: `file:${join(db.dir, 'fresh.db')}` }));
    await migrate(drizzle(fresh), { migrationsFolder: migrationsFolder() });
    expect(await schemaOf(old)).toEqual(await schemaOf(fresh));

    // And the store carries on writing to it.
    store.appendLog(frame('old', 4));
    await store.flush();
    expect(await count(old, 'old')).toBe(4);
  });

  it('puts a file database in WAL mode', async () => {
    await open();
    const { rows } = await rawClient().execute('PRAGMA journal_mode');
    expect(rows[0]?.journal_mode).toBe('wal');
  });
});

describe('opening', () => {
  it('names the database and says it is locked when another connection holds the write lock', { timeout: 15_000 }, async () => {
    await (await open()).close();
    const holder = rawClient();
    const tx = await holder.transaction('write');
    await tx.execute("update sessions set id = id where 0");
    const err = await openStore({ url: db.url }).catch((e: unknown) => e);
    tx.close();
    expect(err).toBeInstanceOf(StoreOpenError);
    expect((err as Error).message).toContain(`cannot use the database ${db.url}: it is locked by another process`);
  });

  it('says a remote database cannot be reached, without printing a token from the URL', async () => {
    const port = await freePort();
    const err = await openStore({ url: `http://127.0.0.1:${port}?authToken=s3cr3t` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreOpenError);
    expect((err as Error).message).toContain(`cannot use the database http://127.0.0.1:${port}: the server cannot be reached`);
    expect((err as Error).message).not.toContain('s3cr3t');
  });
});

describe('sessions', () => {
  it('round-trip through create, get, list and update', async () => {
    const store = await open();
    const a = session('a', { argv: null, command: 'top', env: {} });
    const b = session('b', { createdAt: '2026-01-02T00:00:00.000Z' });
    await store.createSession(b);
    await store.createSession(a);
    await store.createSession(session('elsewhere', { instanceId: 'other' }));

    expect(await store.getSession('local', 'a')).toEqual(a);
    expect(await store.getSession('other', 'a')).toBeUndefined();
    expect(await store.getSession('local', 'missing')).toBeUndefined();
    expect(await store.listSessions('local')).toEqual([a, b]);

    await store.updateSession('b', {
      state: 'closed',
      closedAt: '2026-01-03T00:00:00.000Z',
      exitCode: 0,
      closeReason: 'normal',
      cols: 120,
      argv: null,
    });
    await store.updateSession('b', {});
    expect(await store.getSession('local', 'b')).toEqual({
      ...b,
      state: 'closed',
      closedAt: '2026-01-03T00:00:00.000Z',
      exitCode: 0,
      closeReason: 'normal',
      cols: 120,
      argv: null,
    });
  });

  it('rejects a duplicate id', async () => {
    const store = await open();
    await store.createSession(session('dup'));
    await expect(store.createSession(session('dup'))).rejects.toThrow();
    expect(await store.listSessions('local')).toHaveLength(1);
  });

  it('createSessionWithin counts and stores in one transaction: two stores on one database at once never pass the limit', async () => {
    const [one, two] = [await open(), await open()];
    await one.createSession(session('ended', { state: 'closed' }));
    await one.createSession(session('theirs', { createdBy: 'bob' }));
    await one.createSession(session('elsewhere', { instanceId: 'other' }));
    const asks = Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).createSessionWithin({ ...session(`s${i}`), createdBy: 'alice' }, 3));
    expect((await Promise.all(asks)).filter(Boolean)).toHaveLength(3);
    const alice = (await one.listSessions('local')).filter((r) => r.createdBy === 'alice' && r.state !== 'closed');
    expect(alice).toHaveLength(3);
    // An ended session frees its place; other principals' and instances' sessions never took one.
    await two.updateSession(alice[0]!.id, { state: 'closed' });
    expect(await two.createSessionWithin({ ...session('again'), createdBy: 'alice' }, 3)).toBe(true);
    expect(await one.createSessionWithin({ ...session('over'), createdBy: 'alice' }, 3)).toBe(false);
    expect(await one.getSession('local', 'over')).toBeUndefined();
  });
});

describe('log', () => {
  it('commits 10,000 appended frames in order', async () => {
    const store = await open();
    await store.createSession(session('s'));
    const frames = Array.from({ length: 10_000 }, (_, i) => frame('s', i + 1));
    for (const entry of frames) store.appendLog(entry);
    await store.flush();

    expect(await count(rawClient(), 's')).toBe(10_000);
    expect(await store.readLog('s', 0)).toEqual(frames);
    expect(await store.readLog('s', 9_990)).toEqual(frames.slice(9_990));
    expect(await store.readLog('s', 500, 3)).toEqual(frames.slice(500, 503));
    expect(await store.readLog('s', 10_000)).toEqual([]);
    expect(await store.lastSequence('s')).toBe(10_000);
    expect(await store.oldestSequence('s')).toBe(1);
  });

  it('keeps Output as the PTY bytes with the frame id, never their base64, and reads back the frame that was sent', async () => {
    const store = await open();
    // Every byte value, and a UTF-8 character cut in two: bytes, not text.
    const bytes = Uint8Array.from([...Array.from({ length: 256 }, (_, i) => i), 0xe2, 0x82]);
    const sent = new OutputFrame('0190f5a0-0000-7000-8000-0000000000aa', 1, 1_000_000, bytes);
    store.appendLog(outputEntry('s1', sent));
    store.appendLog(frame('s1', 2));
    const queued = await store.readLog('s1', 0);
    expect(queued[0]!.frame).toBe(sent.json);
    await store.flush();

    const { rows } = await rawClient().execute("select sequence, frame, output, frame_id from session_log where session_id = 's1' order by sequence");
    expect(rows[0]).toMatchObject({ frame: '', frame_id: sent.id });
    expect(new Uint8Array(rows[0]!.output as ArrayBuffer)).toEqual(bytes);
    expect(rows[1]).toMatchObject({ frame: frame('s1', 2).frame, output: null, frame_id: null });

    const [output, json] = await store.readLog('s1', 0);
    expect(output).toMatchObject({ sequence: 1, kind: 'Output', createdAt: 1_000_000, output: { id: sent.id, data: bytes } });
    expect(output!.frame).toBe(sent.json);
    expect(JSON.parse(output!.frame)).toEqual({ op: 'pty.session_frame', id: sent.id, ts: new Date(1_000_000).toISOString(), sequence: 1, payload: { kind: 'Output', stream: 'stdout', data: Buffer.from(bytes).toString('base64') } });
    expect(json).toEqual(frame('s1', 2));
  });

  it('reads queued frames before they are committed, merged with committed ones', async () => {
    const store = await open({ flushIntervalMs: 60_000 });
    store.appendLog(frame('s', 1));
    store.appendLog(frame('s', 2));
    await store.flush();
    store.appendLog(frame('s', 3));
    store.appendLog(frame('s', 4));

    expect(await count(rawClient(), 's')).toBe(2);
    expect((await store.readLog('s', 0)).map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect((await store.readLog('s', 1, 2)).map((e) => e.sequence)).toEqual([2, 3]);
    expect((await store.readLog('s', 3)).map((e) => e.sequence)).toEqual([4]);
    expect(await store.lastSequence('s')).toBe(4);
    expect(await store.oldestSequence('s')).toBe(1);

    store.appendLog(frame('fresh', 7));
    expect(await store.oldestSequence('fresh')).toBe(7);
    expect(await store.lastSequence('fresh')).toBe(7);
    expect(await store.lastSequence('none')).toBe(0);
    expect(await store.oldestSequence('none')).toBeNull();
  });

  it('keeps the log readable while a batch commits', async () => {
    const store = await open({ maxBatch: 50 });
    const frames = Array.from({ length: 400 }, (_, i) => frame('s', i + 1));
    for (const entry of frames) store.appendLog(entry);
    const reads: Array<Promise<LogEntry[]>> = [];
    for (let i = 0; i < 20; i++) {
      reads.push(store.readLog('s', 0));
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    for (const read of await Promise.all(reads)) expect(read).toEqual(frames);
  });

  it('keeps interleaved sessions apart', async () => {
    const store = await open({ maxBatch: 64 });
    const ids = ['a', 'b', 'c', 'd', 'e'];
    for (const id of ids) await store.createSession(session(id));
    for (let sequence = 1; sequence <= 300; sequence++) {
      for (const id of ids) if (sequence % (ids.indexOf(id) + 1) === 0) store.appendLog(frame(id, sequence / (ids.indexOf(id) + 1)));
    }
    await store.flush();
    for (const [i, id] of ids.entries()) {
      const expected = Math.floor(300 / (i + 1));
      const log = await store.readLog(id, 0);
      expect(log.map((e) => e.sequence)).toEqual(Array.from({ length: expected }, (_, k) => k + 1));
      expect(log.every((e) => e.sessionId === id)).toBe(true);
      expect(await store.lastSequence(id)).toBe(expected);
    }
    const { rows } = await rawClient().execute('select id, current_sequence from sessions order by id');
    expect(rows.map((r) => Number(r.current_sequence))).toEqual([300, 150, 100, 75, 60]);
  });

  it('commits queued frames on close', async () => {
    const store = await open({ flushIntervalMs: 60_000 });
    for (let i = 1; i <= 1234; i++) store.appendLog(frame('s', i));
    await store.close();
    await store.close();
    store.appendLog(frame('s', 1235));

    const reopened = await open();
    expect(await count(rawClient(), 's')).toBe(1234);
    expect(await reopened.lastSequence('s')).toBe(1234);
  });

  /**
   * A store whose log table is renamed away under it by a second connection (a real fault), and
   * `first` appended: resolves once its first commit has failed.
   */
  async function failingStore(options: Partial<OpenStoreOptions>, first: LogEntry): Promise<{ store: LibsqlStore; raw: Client; records: Array<{ level: LogLevel; msg: string }>; losses: LogLoss[] }> {
    const records: Array<{ level: LogLevel; msg: string }> = [];
    const store = await open({ logger: recordingLogger(records), ...options });
    const losses: LogLoss[] = [];
    store.onLogLoss((loss) => losses.push(loss));
    const raw = rawClient();
    await raw.execute('alter table session_log rename to session_log_away');
    store.appendLog(first);
    await vi.waitFor(() => expect(records.map((r) => r.level)).toEqual(['warn']), { interval: 5 });
    return { store, raw, records, losses };
  }

  it('retries a failed commit, reports the frames it gives up on, and keeps accepting frames', async () => {
    const { store, raw, records, losses } = await failingStore({ retryDelaysMs: [250] }, frame('s', 1));
    await raw.execute('alter table session_log_away rename to session_log');
    await store.flush();
    expect(await count(raw, 's')).toBe(1);
    expect(losses).toEqual([]);

    await raw.execute('alter table session_log rename to session_log_away');
    store.appendLog(frame('s', 2));
    await expect(store.flush()).rejects.toThrow(/could not be committed/);
    expect(records.map((r) => r.level)).toEqual(['warn', 'warn', 'error']);
    expect(losses).toEqual([{ sessionId: 's', first: 2, last: 2, frames: 1, reason: 'commit_failed' }]);

    await raw.execute('alter table session_log_away rename to session_log');
    store.appendLog(frame('s', 3));
    await store.flush();
    expect((await store.readLog('s', 0)).map((e) => e.sequence)).toEqual([1, 3]);
  });

  it('bounds memory while the database is down: drops the oldest uncommitted frames and reports them', async () => {
    // Frames of exactly 100 bytes: the 1000-byte cap holds ten of them, and a drop goes down to 750 bytes.
    const sized = (sessionId: string, sequence: number): LogEntry => ({ ...frame(sessionId, sequence), frame: JSON.stringify({ sequence, pad: '' }).padEnd(100, ' ') });
    const { store, raw, records, losses } = await failingStore({ retryDelaysMs: [300], maxQueuedBytes: 1000, maxBatch: 5 }, sized('s', 1));
    // Frame 1 is being retried: it stays. Each time an append passes 1000 bytes, the oldest
    // others go until seven frames are left.
    for (let i = 2; i <= 40; i++) store.appendLog(sized('s', i));
    store.appendLog(sized('t', 1));
    expect(records.filter((r) => r.level === 'error').map((r) => r.msg)).toContain('storage: write queue full, dropping the oldest log frames not yet committed');

    await raw.execute('alter table session_log_away rename to session_log');
    // Still queued (frame 1 waits for its retry), and readable without the dropped ones.
    expect(await count(raw, 's')).toBe(0);
    const kept = [1, ...range(34, 40)];
    expect((await store.readLog('s', 0)).map((e) => e.sequence)).toEqual(kept);
    expect((await store.readLog('t', 0)).map((e) => e.sequence)).toEqual([1]);
    await store.flush();
    expect((await store.readLog('s', 0)).map((e) => e.sequence)).toEqual(kept);
    expect(await count(raw, 's')).toBe(kept.length);
    expect(await store.lastSequence('s')).toBe(40);
    expect(losses).toEqual([{ sessionId: 's', first: 2, last: 33, frames: 32, reason: 'queue_full' }]);
  });
});

describe('mergeBySequence', () => {
  // The overlap only arises when a read's query lands between a commit and the queue letting go
  // of that batch, which a local database never interleaves deterministically: pin it here.
  it('keeps one copy of an entry that is both committed and queued', () => {
    const committed = [1, 2, 3, 4].map((n) => frame('s', n));
    const queued = [3, 4, 5, 6].map((n) => frame('s', n));
    expect(mergeBySequence(committed, queued).map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(mergeBySequence(committed, queued, 4).map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect(mergeBySequence([], queued, 2).map((e) => e.sequence)).toEqual([3, 4]);
    expect(mergeBySequence(committed, []).map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
  });
});

describe('prune', () => {
  const now = 1_000_000;
  const old = now - 120_000;

  async function seed(store: LibsqlStore, oldFrames: number, newFrames: number): Promise<void> {
    for (let i = 1; i <= oldFrames + newFrames; i++) store.appendLog(frame('s', i, i <= oldFrames ? old : now));
    store.appendLog(frame('other', 1, old));
  }

  it('keeps the newest frames when they outnumber the recent ones', async () => {
    const store = await open();
    await seed(store, 80, 10);
    expect(await store.prune('s', { keepFrames: 50, keepSeconds: 60, now })).toBe(40);
    expect(await store.oldestSequence('s')).toBe(41);
    expect(await store.lastSequence('s')).toBe(90);
    expect(await store.readLog('other', 0)).toHaveLength(1);
  });

  it('keeps the recent frames when they outnumber keepFrames', async () => {
    const store = await open();
    await seed(store, 80, 30);
    expect(await store.prune('s', { keepFrames: 10, keepSeconds: 60, now })).toBe(80);
    expect(await store.oldestSequence('s')).toBe(81);
  });

  it('deletes nothing while there are fewer frames than keepFrames', async () => {
    const store = await open();
    await seed(store, 20, 0);
    expect(await store.prune('s', { keepFrames: 50, keepSeconds: 60, now })).toBe(0);
    expect(await store.oldestSequence('s')).toBe(1);
  });

  it('remembers the sequence when the whole log is pruned', async () => {
    const store = await open();
    await store.createSession(session('s'));
    await seed(store, 5, 0);
    expect(await store.prune('s', { keepFrames: 0, keepSeconds: 60, now })).toBe(5);
    expect(await store.oldestSequence('s')).toBeNull();
    expect(await store.lastSequence('s')).toBe(5);
  });
});
