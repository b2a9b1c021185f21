import type { Client, InArgs, InStatement, ResultSet } from '@libsql/client';
import { and, asc, desc, eq, getTableColumns, gt, lt, min, sql } from 'drizzle-orm';
import type { LibSQLDatabase } from 'drizzle-orm/libsql';
import type { LogEntry, Logger, SessionPatch, SessionRecord, Store } from '../src/ports.ts';
import { mergeBySequence, PendingLog } from './pending-log.ts';
import { sessionLog, sessions } from './schema.ts';
import { WriteQueue } from './write-queue.ts';

export type StoreDatabase = LibSQLDatabase & { $client: Client };

export interface LibsqlStoreOptions {
  logger?: Logger;
  /** Longest a log frame waits in memory before its group commit starts (default 5). */
  flushIntervalMs?: number;
  /** Most log frames per commit; a full batch commits at once (default 500). */
  maxBatch?: number;
  /** Waits before retrying a failed log commit (default 50, 200, 1000, 3000 ms). */
  retryDelaysMs?: readonly number[];
}

export interface PruneOptions {
  /** The newest this many frames are always kept. */
  keepFrames: number;
  /** Frames younger than this are always kept. */
  keepSeconds: number;
  /** Milliseconds since the epoch. */
  now: number;
}

/** A drizzle query builder: built here, run through the client so the batch is a write transaction. */
type BuiltQuery = { toSQL(): { sql: string; params: unknown[] } };

// Small enough for any server's bound-parameter limit (SQLite's old default was 999).
const ROWS_PER_INSERT = 100;

const { currentSequence: _currentSequence, ...recordColumns } = getTableColumns(sessions);

/** The session and log tables behind the `Store` port, with every write through one queue. */
export class LibsqlStore implements Store {
  readonly #db: StoreDatabase;
  readonly #logger: Logger | undefined;
  readonly #pending = new PendingLog();
  readonly #writes: WriteQueue;
  #closed = false;

  constructor(db: StoreDatabase, options: LibsqlStoreOptions = {}) {
    this.#db = db;
    this.#logger = options.logger;
    this.#writes = new WriteQueue({
      commitLog: (batch) => this.#commitLog(batch),
      onSettled: (batch) => this.#pending.remove(batch),
      flushIntervalMs: options.flushIntervalMs ?? 5,
      maxBatch: options.maxBatch ?? 500,
      retryDelaysMs: options.retryDelaysMs ?? [50, 200, 1000, 3000],
      logger: options.logger,
    });
  }

  async createSession(rec: SessionRecord): Promise<void> {
    await this.#write([this.#db.insert(sessions).values(rec)]);
  }

  async getSession(instanceId: string, sessionId: string): Promise<SessionRecord | undefined> {
    const rows = await this.#db
      .select(recordColumns)
      .from(sessions)
      .where(and(eq(sessions.id, sessionId), eq(sessions.instanceId, instanceId)));
    return rows[0];
  }

  listSessions(instanceId: string): Promise<SessionRecord[]> {
    return this.#db
      .select(recordColumns)
      .from(sessions)
      .where(eq(sessions.instanceId, instanceId))
      .orderBy(asc(sessions.createdAt), asc(sessions.id));
  }

  async updateSession(sessionId: string, patch: SessionPatch): Promise<void> {
    // Named one by one so a caller's wider object can never reach other columns.
    const set = {
      state: patch.state,
      backend: patch.backend,
      sessionClass: patch.sessionClass,
      cwd: patch.cwd,
      argv: patch.argv,
      cols: patch.cols,
      rows: patch.rows,
      closedAt: patch.closedAt,
      exitCode: patch.exitCode,
      closeReason: patch.closeReason,
    };
    if (Object.values(set).every((value) => value === undefined)) return;
    await this.#write([this.#db.update(sessions).set(set).where(eq(sessions.id, sessionId))]);
  }

  appendLog(entry: LogEntry): void {
    if (this.#closed) {
      this.#logger?.log('warn', 'storage: log frame appended after close, dropped', {
        sessionId: entry.sessionId,
        sequence: entry.sequence,
      });
      return;
    }
    this.#pending.add(entry);
    this.#writes.appendLog(entry);
  }

  async readLog(sessionId: string, afterSequence: number, limit?: number): Promise<LogEntry[]> {
    // Queued entries are taken before the query: one committed in between then shows up in
    // both (and is deduplicated) rather than in neither.
    const queued = this.#pending.after(sessionId, afterSequence, limit);
    const committed = await this.#db
      .select()
      .from(sessionLog)
      .where(and(eq(sessionLog.sessionId, sessionId), gt(sessionLog.sequence, afterSequence)))
      .orderBy(asc(sessionLog.sequence))
      // SQLite reads a negative LIMIT as none.
      .limit(limit ?? -1);
    return mergeBySequence(committed, queued, limit);
  }

  async lastFrameOfKind(sessionId: string, kind: string): Promise<LogEntry | undefined> {
    const queued = this.#pending.lastOfKind(sessionId, kind);
    if (queued !== undefined) return queued;
    // Walks the primary key backwards from the newest frame: Keyframes are never far apart.
    const [row] = await this.#db
      .select()
      .from(sessionLog)
      .where(and(eq(sessionLog.sessionId, sessionId), eq(sessionLog.kind, kind)))
      .orderBy(desc(sessionLog.sequence))
      .limit(1);
    return row;
  }

  async lastSequence(sessionId: string): Promise<number> {
    // Entries are appended in order, so a queued one is newer than anything committed.
    const queued = this.#pending.last(sessionId);
    if (queued !== undefined) return queued.sequence;
    // current_sequence remembers the counter even when retention has emptied the log.
    const [row] = await this.#db.all<{ last: number }>(sql`
      select max(
        coalesce((select ${sessions.currentSequence} from ${sessions} where ${sessions.id} = ${sessionId}), 0),
        coalesce((select max(${sessionLog.sequence}) from ${sessionLog} where ${sessionLog.sessionId} = ${sessionId}), 0)
      ) as last`);
    return Number(row?.last ?? 0);
  }

  async oldestSequence(sessionId: string): Promise<number | null> {
    const queued = this.#pending.first(sessionId);
    const [row] = await this.#db
      .select({ oldest: min(sessionLog.sequence) })
      .from(sessionLog)
      .where(eq(sessionLog.sessionId, sessionId));
    return row?.oldest ?? queued?.sequence ?? null;
  }

  /**
   * Retention (DECISIONS §7): deletes the session's frames that are both beyond the newest
   * `keepFrames` and older than `keepSeconds`, so whichever rule keeps more wins. Runs in the
   * write queue, after every frame appended before the call. Resolves with the rows deleted.
   */
  async prune(sessionId: string, { keepFrames, keepSeconds, now }: PruneOptions): Promise<number> {
    const conditions = [eq(sessionLog.sessionId, sessionId), lt(sessionLog.createdAt, now - keepSeconds * 1000)];
    if (keepFrames > 0) {
      // The oldest frame to keep by count; with fewer frames than that the bound is NULL and nothing goes.
      const oldestKept = this.#db
        .select({ sequence: sessionLog.sequence })
        .from(sessionLog)
        .where(eq(sessionLog.sessionId, sessionId))
        .orderBy(desc(sessionLog.sequence))
        .limit(1)
        .offset(keepFrames - 1);
      conditions.push(sql`${sessionLog.sequence} < (${oldestKept})`);
    }
    const [result] = await this.#write([this.#db.delete(sessionLog).where(and(...conditions))]);
    return result?.rowsAffected ?? 0;
  }

  flush(): Promise<void> {
    return this.#writes.flush();
  }

  /**
   * Stops accepting log frames, commits what is queued, then closes the client. Like flush(),
   * rejects (after closing) if queued frames had to be dropped.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#writes.flush();
    } finally {
      this.#db.$client.close();
    }
  }

  #write(queries: BuiltQuery[]): Promise<ResultSet[]> {
    if (this.#closed) return Promise.reject(new Error('storage: the store is closed'));
    const statements = queries.map(toStatement);
    return this.#writes.exclusive(() => this.#db.$client.batch(statements, 'write'));
  }

  async #commitLog(batch: readonly LogEntry[]): Promise<void> {
    const statements: InStatement[] = [];
    for (let i = 0; i < batch.length; i += ROWS_PER_INSERT) {
      const rows = batch.slice(i, i + ROWS_PER_INSERT);
      // Ignoring a row already there makes a retry idempotent when a commit succeeded but its
      // acknowledgement was lost (remote databases).
      statements.push(toStatement(this.#db.insert(sessionLog).values(rows).onConflictDoNothing()));
    }
    for (const [sessionId, last] of lastSequences(batch)) {
      const bump = this.#db
        .update(sessions)
        .set({ currentSequence: sql`max(${sessions.currentSequence}, ${last})` })
        .where(eq(sessions.id, sessionId));
      statements.push(toStatement(bump));
    }
    await this.#db.$client.batch(statements, 'write');
  }
}

function toStatement(query: BuiltQuery): InStatement {
  const { sql: text, params } = query.toSQL();
  return { sql: text, args: params as InArgs };
}

function lastSequences(batch: readonly LogEntry[]): Map<string, number> {
  const last = new Map<string, number>();
  for (const { sessionId, sequence } of batch) last.set(sessionId, Math.max(sequence, last.get(sessionId) ?? 0));
  return last;
}
