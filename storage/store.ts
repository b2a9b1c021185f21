import type { InValue, ResultSet } from '@libsql/client';
import { and, asc, count, desc, eq, lt, min, ne, sql } from 'drizzle-orm';
import { LOG_QUEUE_CAP_BYTES } from '../src/core/flow-budget.ts';
import type { LogEntry } from '../src/protocol/logged-frames.ts';
import type { Logger } from '../src/ports/logger.ts';
import type { LogLoss, LostRange, QueueListener, SequenceState, SessionPatch, SessionRecord, Store } from '../src/ports/store.ts';
import type { BuiltQuery, StoreDatabase } from './db.ts';
import { inThreadLogCommitter, type LogCommitter, type LogStatement } from './log-committer.ts';
import { logInserts } from './log-insert.ts';
import { clientLogReader, type LogReader } from './log-reader.ts';
import { logEntryOfValues, logValueColumns } from './log-rows.ts';
import { logEntryBytes } from '../src/protocol/output-frame.ts';
import { readJournal, type LogJournal } from './log-journal.ts';
import { SequenceLedger } from './sequence-ledger.ts';
import { mergeBySequence, PendingLog } from './pending-log.ts';
import { RecentLog, type RecentLogLimits } from './recent-log.ts';
import { sessionLog, sessionRecordColumns, sessions } from './schema.ts';
import { LibsqlShareStore } from './share-store.ts';
import { LibsqlHostStore } from './host-store.ts';
import { LossRecords } from './loss-records.ts';
import { Retention } from './retention.ts';
import { LibsqlInstanceLeases } from './instance-leases.ts';
import { LibsqlInstanceRegistry } from './instance-registry.ts';
import { storeFault } from './store-fault.ts';
import { BindingError } from '../src/protocol/errors.ts';
import { LibsqlTaskStore } from './task-store.ts';
import { LibsqlPushStore } from './push-store.ts';
import { WriteQueue } from './write-queue.ts';

export interface LibsqlStoreOptions {
  logger?: Logger;
  /** Longest a log frame waits in memory before its group commit starts (default 5). */
  flushIntervalMs?: number;
  /** Most log frames per commit; a full batch commits at once (default 500). */
  maxBatch?: number;
  /** Most bytes of frames per commit (default 1 MiB): bounds one transaction, or one request to a remote server. */
  maxBatchBytes?: number;
  /**
   * Most bytes of frames waiting for commit (default 64 MiB). While the database is down the
   * queue grows; beyond this the oldest uncommitted frames are dropped and reported (onLogLoss).
   */
  maxQueuedBytes?: number;
  /** Waits before retrying a failed log commit (default 50, 200, 1000, 3000 ms). */
  retryDelaysMs?: readonly number[];
  /** Runs the log's group commits (default: this store's client, in this thread). The store closes it. */
  logCommitter?: LogCommitter;
  /**
   * How much of each session's newest committed log stays in memory for replays (default 2 MiB a
   * session, 32 MiB in all; docs/performance.md, replay). Zero keeps none.
   */
  recentLog?: RecentLogLimits;
  /** Reads the committed log for replays (default: this store's client). The store closes it. */
  logReader?: LogReader;
  /** Where every log frame is written before it may be sent (docs/protocol.md §3.4). The store closes it. */
  journal?: LogJournal;
}

/** What a start found in the journal (docs/protocol.md §3.4). */
export interface JournalRecovery {
  /** Frames the database lacked, now committed. */
  recovered: number;
  /** Whether the journal vouches for every number its router handed out (same boot, same instance). */
  trusted: boolean;
  /** Per PTY host epoch and session, the last host event the journal's frames folded in. */
  hostEvents: Map<string, Record<string, number>>;
}

export interface PruneOptions {
  /** The newest this many frames are always kept. */
  keepFrames: number;
  /** Frames younger than this are always kept. */
  keepSeconds: number;
  /** Milliseconds since the epoch. */
  now: number;
}


/** The session and log tables behind the `Store` port (and the task tables behind `tasks`), with every write through one queue. */
export class LibsqlStore implements Store {
  /** The A2A tasks, written through this store's single writer. */
  readonly tasks: LibsqlTaskStore;
  /** Share links, written through the same writer. */
  readonly shares: LibsqlShareStore;
  /** Remote PTY hosts' credentials (docs/remote-hosts.md), written through the same writer. */
  readonly hosts: LibsqlHostStore;
  /** Push-notification configs and their outbox (docs/a2a.md), written through the same writer. */
  readonly push: LibsqlPushStore;
  /** Which router serves which instance id, written through this store's single writer. */
  readonly leases: LibsqlInstanceLeases;
  /** The instances sharing this database and their heartbeats (docs/deployment.md), written through the same writer. */
  readonly instances: LibsqlInstanceRegistry;
  /** What is deleted beyond the replay floor: ended sessions, finished tasks, logs over their budgets (docs/operations.md, "Disk"). */
  readonly retention: Retention;
  readonly #db: StoreDatabase;
  readonly #logger: Logger | undefined;
  readonly #pending = new PendingLog();
  readonly #recent: RecentLog;
  readonly #writes: WriteQueue;
  readonly #committer: LogCommitter;
  readonly #reader: LogReader;
  readonly #lossListeners = new Set<(loss: LogLoss) => void>();
  readonly #queueListeners = new Set<QueueListener>();
  readonly #pushListeners = new Set<() => void>();
  /** Insert statement text by row count (see logInserts). */
  readonly #insertTexts = new Map<number, string>();
  readonly #sequences: SequenceLedger;
  readonly #losses: LossRecords;
  #lastWriteFault: BindingError | undefined;
  #logLimit: { bytes: number; measured: number; exceeded: () => void } | undefined;
  #committedSinceMeasure = 0;
  #journal: LogJournal | undefined;
  #closed = false;

  constructor(db: StoreDatabase, options: LibsqlStoreOptions = {}) {
    this.#db = db;
    this.#logger = options.logger;
    this.#committer = options.logCommitter ?? inThreadLogCommitter(db.$client);
    this.#reader = options.logReader ?? clientLogReader(db.$client);
    this.#recent = new RecentLog(options.recentLog ?? { perSession: 2 * 1024 * 1024, total: 32 * 1024 * 1024 });
    this.#writes = new WriteQueue({
      commitLog: (batch) => this.#commitLog(batch),
      onSettled: (entries, committed) => this.#settled(entries, committed),
      onLost: (losses) => this.#reportLosses(losses),
      flushIntervalMs: options.flushIntervalMs ?? 5,
      maxBatch: options.maxBatch ?? 500,
      maxBatchBytes: options.maxBatchBytes ?? 1024 * 1024,
      maxQueuedBytes: options.maxQueuedBytes ?? LOG_QUEUE_CAP_BYTES,
      retryDelaysMs: options.retryDelaysMs ?? [50, 200, 1000, 3000],
      logger: options.logger,
    });
    this.tasks = new LibsqlTaskStore(db, (queries) => this.#write(queries), () => {
      for (const listener of this.#pushListeners) listener();
    });
    this.push = new LibsqlPushStore(db, (queries) => this.#write(queries));
    this.shares = new LibsqlShareStore(db, (queries) => this.#write(queries));
    this.hosts = new LibsqlHostStore(db, (queries) => this.#write(queries));
    this.leases = new LibsqlInstanceLeases(db, (queries) => this.#write(queries));
    this.instances = new LibsqlInstanceRegistry(db, (queries) => this.#write(queries));
    this.retention = new Retention(db, (queries) => this.#write(queries));
    this.#sequences = new SequenceLedger(db, (queries) => this.#write(queries));
    // Also at close, after the last log commit: a loss known then is still recorded.
    this.#losses = new LossRecords(db, (queries) => this.#enqueue(queries), () => Date.now(), options.logger);
    this.#journal = options.journal;
  }

  /**
   * At start, before any session is loaded: commits the frames the journal has and the log lacks,
   * and when the journal can vouch for its router (`ids` match its header) lowers the ceilings
   * to what that router really handed out. Then the journal starts afresh.
   */
  async recoverJournal(ids: { bootId: string | null; instanceId: string }): Promise<JournalRecovery> {
    if (!this.#journal) return { recovered: 0, trusted: false, hostEvents: new Map() };
    const found = readJournal(this.#journal.contents());
    const missing = await this.#sequences.missing(found.entries);
    if (missing.length > 0) await this.#writes.exclusive(() => this.#commitLog(missing)).catch((err: unknown) => Promise.reject(storeFault(err)));
    const trusted = ids.bootId !== null && found.bootId === ids.bootId && found.instanceId === ids.instanceId;
    if (trusted) await this.#sequences.trustJournal(ids.instanceId, found);
    this.#journal?.reset(found.hostEvents);
    return { recovered: missing.length, trusted, hostEvents: found.hostEvents };
  }

  async createSession(rec: SessionRecord): Promise<void> {
    await this.#write([this.#db.insert(sessions).values(rec)]);
  }

  /**
   * From now on a session is refused with LOG_BUDGET_EXCEEDED (507) while the logs' bytes, as
   * `measured` plus what was committed since, exceed `bytes`; `exceeded` runs then, to bring them
   * back under (src/router/retention-sweep.ts measures and calls this again).
   */
  limitLogBytes(limit: { bytes: number; measured: number; exceeded: () => void }): void {
    this.#logLimit = limit;
    this.#committedSinceMeasure = 0;
  }

  async createSessionWithin(rec: SessionRecord & { createdBy: string }, limit: number): Promise<boolean> {
    const budget = this.#logLimit;
    if (budget && budget.measured + this.#committedSinceMeasure > budget.bytes) {
      budget.exceeded();
      throw logBudgetExceeded(budget.measured + this.#committedSinceMeasure, budget.bytes);
    }
    // One write transaction: the row goes in, then out again when it made one too many. Another
    // router's creation on the same database commits before or after this one, never between.
    const live = this.#db
      .select({ n: count() })
      .from(sessions)
      .where(and(eq(sessions.instanceId, rec.instanceId), eq(sessions.createdBy, rec.createdBy), ne(sessions.state, 'closed')));
    const [, undone] = await this.#write([this.#db.insert(sessions).values(rec), this.#db.delete(sessions).where(and(eq(sessions.id, rec.id), sql`(${live}) > ${limit}`))]);
    return (undone?.rowsAffected ?? 0) === 0;
  }

  async getSession(instanceId: string, sessionId: string): Promise<SessionRecord | undefined> {
    const rows = await this.#db
      .select(sessionRecordColumns)
      .from(sessions)
      .where(and(eq(sessions.id, sessionId), eq(sessions.instanceId, instanceId)));
    return rows[0];
  }

  listSessions(instanceId: string): Promise<SessionRecord[]> {
    return this.#db
      .select(sessionRecordColumns)
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
      env: patch.env,
      cols: patch.cols,
      rows: patch.rows,
      closedAt: patch.closedAt,
      hadMember: patch.hadMember,
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
    this.#journalAppend(entry);
    this.#pending.add(entry);
    for (const listener of this.#queueListeners) listener.queued(logEntryBytes(entry));
    this.#writes.appendLog(entry);
  }

  async readLog(sessionId: string, afterSequence: number, limit?: number): Promise<LogEntry[]> {
    // Queued entries are taken before the query: one committed in between then shows up in
    // both (and is deduplicated) rather than in neither.
    const queued = this.#pending.after(sessionId, afterSequence, limit);
    // Committed ones from memory when every one asked for is there; SQLite reads a negative LIMIT as none.
    const committed =
      this.#recent.after(sessionId, afterSequence, limit) ?? (await this.#reader.range(sessionId, afterSequence, limit ?? -1)).map((row) => logEntryOfValues(sessionId, row));
    return mergeBySequence(committed, queued, limit);
  }

  async lastFrameOfKind(sessionId: string, kind: string): Promise<LogEntry | undefined> {
    const queued = this.#pending.lastOfKind(sessionId, kind);
    if (queued !== undefined) return queued;
    // Walks the primary key backwards from the newest frame: Keyframes are never far apart.
    const [row] = await this.#db
      .select(logValueColumns)
      .from(sessionLog)
      .where(and(eq(sessionLog.sessionId, sessionId), eq(sessionLog.kind, kind)))
      .orderBy(desc(sessionLog.sequence))
      .limit(1)
      .values();
    return row && logEntryOfValues(sessionId, row);
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

  async sequenceState(sessionId: string): Promise<SequenceState> {
    const state = await this.#sequences.state(sessionId);
    return { ...state, stored: Math.max(state.stored, await this.lastSequence(sessionId)) };
  }

  reserveSequences(sessionId: string, ceiling: number): Promise<void> {
    return this.#sequences.reserve(sessionId, ceiling);
  }

  skipSequences(sessionId: string, ceiling: number, skipped: number): Promise<void> {
    const run = skipped > 0 ? [this.#losses.record({ sessionId, first: ceiling - skipped + 1, last: ceiling, reason: 'skipped' })] : [];
    return this.#sequences.skip(sessionId, ceiling, skipped, run);
  }

  lostRanges(sessionId: string, after: number, upTo: number): Promise<LostRange[]> {
    return this.#losses.ranges(sessionId, after, upTo);
  }

  releaseSequences(last: ReadonlyMap<string, number>): Promise<void> {
    return this.#sequences.release(last);
  }

  /**
   * Retention (docs/protocol.md §6.5): deletes the session's frames that are both beyond the newest
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
    const doomed = and(...conditions);
    // The session's byte count (the log budgets', storage/retention.ts) goes down in the same transaction.
    const bytes = sql`(select coalesce(sum(length(${sessionLog.frame}) + coalesce(length(${sessionLog.output}), 0)), 0) from ${sessionLog} where ${doomed})`;
    const [, result] = await this.#write([
      this.#db.update(sessions).set({ logBytes: sql`max(0, ${sessions.logBytes} - ${bytes})` }).where(eq(sessions.id, sessionId)),
      this.#db.delete(sessionLog).where(doomed),
    ]);
    this.#recent.pruned(sessionId, now - keepSeconds * 1000, keepFrames);
    return result?.rowsAffected ?? 0;
  }

  onLogLoss(listener: (loss: LogLoss) => void): () => void {
    this.#lossListeners.add(listener);
    return () => this.#lossListeners.delete(listener);
  }

  /** Calls `listener` after every task write that queued push notifications. Returns the unsubscribe. */
  onPushQueued(listener: () => void): () => void {
    this.#pushListeners.add(listener);
    return () => this.#pushListeners.delete(listener);
  }

  watchQueue(listener: QueueListener): () => void {
    this.#queueListeners.add(listener);
    return () => this.#queueListeners.delete(listener);
  }

  flush(): Promise<void> {
    return this.#writes.flush();
  }

  /**
   * Stops accepting log frames, commits what is queued, then closes the log committer and the
   * client. Like flush(), rejects (after closing) if queued frames had to be dropped.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#writes.flush();
    } finally {
      try {
        await this.#losses.store();
        await this.#committer.close();
      } finally {
        this.#journal?.close();
        this.#reader.close();
        this.#db.$client.close();
      }
    }
  }

  /**
   * A journal that cannot be written (a full disk) can no longer vouch for its router: it is
   * given up, emptied if it can be, and the ceilings alone keep numbers from being reused.
   */
  #journalAppend(entry: LogEntry): void {
    if (!this.#journal) return;
    try {
      this.#journal.append(entry);
    } catch (err) {
      const journal = this.#journal;
      this.#journal = undefined;
      this.#logger?.log('error', 'storage: the log journal cannot be written; a crash from now on skips numbers instead of keeping frames', { error: err });
      try {
        journal.discard();
        journal.close();
      } catch {
        // The next start finds it damaged or stale: it does not vouch then either.
      }
    }
  }

  #settled(entries: readonly LogEntry[], committed: boolean): void {
    this.#journal?.settled(entries);
    this.#pending.remove(entries);
    if (committed) {
      this.#recent.committed(entries);
      // The database takes writes again: losses it could not record meanwhile are.
      void this.#losses.store();
    }
    if (this.#queueListeners.size === 0) return;
    let bytes = 0;
    for (const entry of entries) bytes += logEntryBytes(entry);
    for (const listener of this.#queueListeners) listener.settled(bytes);
  }

  #reportLosses(losses: LogLoss[]): void {
    this.#losses.add(losses);
    for (const loss of losses) {
      for (const listener of [...this.#lossListeners]) {
        try {
          listener(loss);
        } catch (err) {
          this.#logger?.log('error', 'storage: log loss listener threw', { error: err });
        }
      }
    }
  }

  #write(queries: BuiltQuery[]): Promise<ResultSet[]> {
    if (this.#closed) return Promise.reject(new Error('storage: the store is closed'));
    return this.#enqueue(queries);
  }

  #enqueue(queries: BuiltQuery[]): Promise<ResultSet[]> {
    const statements = queries.map(toStatement);
    return this.#writes.exclusive(() => this.#db.$client.batch(statements, 'write')).then(
      (result) => {
        this.#lastWriteFault = undefined;
        return result;
      },
      (err: unknown) => {
        const fault = storeFault(err);
        this.#noteWriteFault(fault);
        throw fault;
      },
    );
  }

  /**
   * The named storage fault the latest write failed with (STORAGE_FULL, STORAGE_READ_ONLY, …), or
   * undefined once a write got through: /readyz reports it (docs/operations.md).
   */
  writeFault(): BindingError | undefined {
    return this.#lastWriteFault;
  }

  #noteWriteFault(fault: unknown): void {
    if (fault instanceof BindingError) this.#lastWriteFault = fault;
  }

  async #commitLog(batch: readonly LogEntry[]): Promise<void> {
    const statements = logInserts(batch, this.#insertTexts);
    const bytes = bytesBySession(batch);
    for (const [sessionId, last] of lastSequences(batch)) {
      const bump = this.#db
        .update(sessions)
        .set({ currentSequence: sql`max(${sessions.currentSequence}, ${last})`, logBytes: sql`${sessions.logBytes} + ${bytes.get(sessionId) ?? 0}` })
        .where(eq(sessions.id, sessionId));
      statements.push(toStatement(bump));
    }
    try {
      await this.#committer.commit(statements);
    } catch (err) {
      this.#noteWriteFault(storeFault(err));
      throw err;
    }
    this.#lastWriteFault = undefined;
    for (const n of bytes.values()) this.#committedSinceMeasure += n;
    if (this.#journal) for (const [sessionId, last] of lastSequences(batch)) this.#journal.committed(sessionId, last);
  }
}

function toStatement(query: BuiltQuery): LogStatement {
  const { sql: text, params } = query.toSQL();
  return { sql: text, args: params as InValue[] };
}

function logBudgetExceeded(used: number, budget: number): BindingError {
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return new BindingError('INTERNAL', `the sessions' logs use ${mib(used)} of their ${mib(budget)} budget (PTY_WS_LOG_BUDGET_BYTES): no session can be created until the oldest are pruned; try again shortly, or end sessions`, {
    metadata: { reason: 'LOG_BUDGET_EXCEEDED' },
    http: 507,
  });
}

/** Bytes of the batch's frames per session, as `sessions.log_bytes` counts them. */
function bytesBySession(batch: readonly LogEntry[]): Map<string, number> {
  const bytes = new Map<string, number>();
  for (const entry of batch) bytes.set(entry.sessionId, (bytes.get(entry.sessionId) ?? 0) + logEntryBytes(entry));
  return bytes;
}

function lastSequences(batch: readonly LogEntry[]): Map<string, number> {
  const last = new Map<string, number>();
  for (const { sessionId, sequence } of batch) last.set(sessionId, Math.max(sequence, last.get(sessionId) ?? 0));
  return last;
}
