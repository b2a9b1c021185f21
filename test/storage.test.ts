import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from '@libsql/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LogEntry, Logger, LogLevel, SessionRecord } from '../src/ports.ts';
import { migrationsFolder } from '../storage/migrate.ts';
import { openStore, type OpenStoreOptions } from '../storage/open.ts';
import { mergeBySequence } from '../storage/pending-log.ts';
import type { LibsqlStore } from '../storage/store.ts';

let dir: string;
let url: string;
const opened: Array<LibsqlStore | Client> = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pty-ws-storage-'));
  url = `file:${join(dir, 'test.db')}`;
});

afterEach(async () => {
  for (const handle of opened.splice(0)) await handle.close();
  await rm(dir, { recursive: true, force: true });
});

async function open(options: Partial<OpenStoreOptions> = {}): Promise<LibsqlStore> {
  const store = await openStore({ url, ...options });
  opened.push(store);
  return store;
}

/** A second, raw connection to the same file: what the store committed, not what it remembers. */
function rawClient(): Client {
  const client = createClient({ url });
  opened.push(client);
  return client;
}

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

function recordingLogger(records: Array<{ level: LogLevel; msg: string }>): Logger {
  const logger: Logger = {
    log: (level, msg) => void records.push({ level, msg }),
    child: () => logger,
  };
  return logger;
}

describe('migrations', () => {
  it('apply idempotently, and a reopened database keeps its rows', async () => {
    const first = await open();
    await first.createSession(session('s1'));
    first.appendLog(frame('s1', 1));
    await first.close();

    await open(); // migrates again over a migrated database
    const reopened = await open();
    expect(await reopened.getSession('local', 's1')).toEqual(session('s1'));
    expect(await reopened.readLog('s1', 0)).toEqual([frame('s1', 1)]);

    const { rows } = await rawClient().execute('select count(*) as n from __drizzle_migrations');
    const journal = JSON.parse(await readFile(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
    expect(journal.entries.length).toBeGreaterThan(1);
    expect(Number(rows[0]?.n)).toBe(journal.entries.length);
  });

  it('puts a file database in WAL mode', async () => {
    await open();
    const { rows } = await rawClient().execute('PRAGMA journal_mode');
    expect(rows[0]?.journal_mode).toBe('wal');
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

  it('holds no timer while idle', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const store = await open();
    const before = timers();
    store.appendLog(frame('s', 1));
    expect(timers()).toBe(before + 1);
    await store.flush();
    expect(timers()).toBe(before);
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

  it('retries a failed commit and keeps accepting frames', async () => {
    const records: Array<{ level: LogLevel; msg: string }> = [];
    const store = await open({ logger: recordingLogger(records), retryDelaysMs: [250] });
    const raw = rawClient();
    await raw.execute('alter table session_log rename to session_log_away');

    store.appendLog(frame('s', 1));
    await vi.waitFor(() => expect(records.map((r) => r.level)).toEqual(['warn']), { interval: 5 });
    await raw.execute('alter table session_log_away rename to session_log');
    await store.flush();
    expect(await count(raw, 's')).toBe(1);

    await raw.execute('alter table session_log rename to session_log_away');
    store.appendLog(frame('s', 2));
    await expect(store.flush()).rejects.toThrow(/could not be committed/);
    expect(records.map((r) => r.level)).toEqual(['warn', 'warn', 'error']);

    await raw.execute('alter table session_log_away rename to session_log');
    store.appendLog(frame('s', 3));
    await store.flush();
    expect((await store.readLog('s', 0)).map((e) => e.sequence)).toEqual([1, 3]);
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
