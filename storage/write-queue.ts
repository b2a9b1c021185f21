import type { LogEntry } from '../src/protocol/logged-frames.ts';
import type { Logger } from '../src/ports/logger.ts';
import type { LogLoss } from '../src/ports/store.ts';
import { logEntryBytes } from '../src/protocol/output-frame.ts';
import { LossLedger } from './loss-ledger.ts';

export interface WriteQueueOptions {
  /** Commits one batch of log entries in a single write transaction. */
  commitLog(batch: readonly LogEntry[]): Promise<void>;
  /** Called with entries as they leave the queue: committed (`committed` true), given up on, or dropped for room. */
  onSettled(entries: readonly LogEntry[], committed: boolean): void;
  /** Called, from the writer loop, with runs of log frames that were given up on. */
  onLost(losses: LogLoss[]): void;
  flushIntervalMs: number;
  maxBatch: number;
  /** A batch stops growing at this many bytes of frames (it always holds at least one). */
  maxBatchBytes: number;
  /**
   * Most bytes of frames held for commit. Beyond it the oldest frames not being committed
   * are dropped, down to three quarters of it (in bulk, so a full queue does not pay for a
   * drop on every append): memory stays bounded while the database is down.
   */
  maxQueuedBytes: number;
  /** Waits before each retry of a failed log commit; the batch is dropped when they run out. */
  retryDelaysMs: readonly number[];
  logger?: Logger;
}

type Op =
  | { kind: 'log'; entries: LogEntry[] }
  | { kind: 'job'; run: () => Promise<void> }
  | { kind: 'barrier'; dropsBefore: number; resolve: () => void; reject: (err: Error) => void };

/** What a frame costs in memory, near enough: its bytes, or its JSON (almost always ASCII). */
const bytesOf = logEntryBytes;

/**
 * The single writer. Every write goes through it in order, so no two write transactions
 * ever overlap (SQLite has one writer; a second would only wait on the lock or fail busy).
 *
 * Log entries are group-committed: the first entry into an idle queue arms one timer of
 * flushIntervalMs; a full batch, a waiting job or a flush commits at once. Commits then run
 * back to back until the queue is empty, so entries arriving during one commit form the next
 * batch. An idle queue holds no timer.
 */
export class WriteQueue {
  readonly #opts: WriteQueueOptions;
  /** The head stays queued until it is done, so an empty queue means nothing is in flight. */
  readonly #ops: Op[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerUrgent = false;
  #draining = false;
  /** Entries at the front of the head op that the current commit holds: they cannot be dropped. */
  #inFlight = 0;
  /** Bytes of frames in the queue, in flight included. */
  #queuedBytes = 0;
  /** Log batches given up on so far; a flush that saw one fail rejects. */
  #drops = 0;
  readonly #losses = new LossLedger();

  constructor(opts: WriteQueueOptions) {
    this.#opts = opts;
  }

  appendLog(entry: LogEntry): void {
    const tail = this.#ops.at(-1);
    if (tail?.kind === 'log') tail.entries.push(entry);
    else this.#ops.push({ kind: 'log', entries: [entry] });
    this.#queuedBytes += bytesOf(entry);
    if (this.#queuedBytes > this.#opts.maxQueuedBytes) this.#makeRoom();
    this.#schedule();
  }

  /**
   * Runs `work` alone, after every write queued before it (except log frames whose commit is being
   * retried: see #runJobsAhead). Its failure is the caller's: no retry.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = async (): Promise<void> => {
        try {
          resolve(await work());
        } catch (err) {
          reject(err);
        }
      };
      this.#ops.push({ kind: 'job', run });
      this.#schedule();
    });
  }

  /** Resolves once everything queued before the call is done; rejects if log frames were dropped meanwhile. */
  flush(): Promise<void> {
    if (this.#ops.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#ops.push({ kind: 'barrier', dropsBefore: this.#drops, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    const head = this.#ops[0];
    if (this.#draining || head === undefined) return;
    const urgent = this.#ops.length > 1 || head.kind !== 'log' || head.entries.length >= this.#opts.maxBatch;
    if (this.#timer !== undefined) {
      if (this.#timerUrgent || !urgent) return;
      clearTimeout(this.#timer);
    }
    this.#timerUrgent = urgent;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        void this.#drain();
      },
      urgent ? 0 : this.#opts.flushIntervalMs,
    );
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    for (let op = this.#ops[0]; op !== undefined; op = this.#ops[0]) {
      this.#reportLosses();
      if (op.kind === 'log') {
        await this.#commitHead(op.entries);
        continue;
      }
      if (op.kind === 'job') await op.run();
      else if (this.#drops > op.dropsBefore) op.reject(new Error('storage: some log frames could not be committed'));
      else op.resolve();
      this.#ops.shift();
    }
    this.#reportLosses();
    this.#draining = false;
  }

  async #commitHead(entries: LogEntry[]): Promise<void> {
    const batch = this.#takeBatch(entries);
    this.#inFlight = batch.length;
    const committed = await this.#commitWithRetry(batch);
    this.#inFlight = 0;
    // Appends may have grown the head meanwhile, and drops shrunk it behind the batch: only
    // the batch leaves.
    entries.splice(0, batch.length);
    if (entries.length === 0) this.#ops.shift();
    for (const entry of batch) this.#queuedBytes -= bytesOf(entry);
    if (!committed) this.#giveUp(batch, 'commit_failed');
    this.#opts.onSettled(batch, committed);
  }

  #takeBatch(entries: LogEntry[]): LogEntry[] {
    let bytes = 0;
    let n = 0;
    while (n < entries.length && n < this.#opts.maxBatch) {
      bytes += bytesOf(entries[n]!);
      if (n > 0 && bytes > this.#opts.maxBatchBytes) break;
      n++;
    }
    return entries.slice(0, n);
  }

  /** Resolves true once committed, false when the retries ran out. */
  async #commitWithRetry(batch: readonly LogEntry[]): Promise<boolean> {
    const { retryDelaysMs, logger } = this.#opts;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#opts.commitLog(batch);
        return true;
      } catch (err) {
        const delay = retryDelaysMs[attempt];
        const fields = { frames: batch.length, attempt: attempt + 1, error: err };
        if (delay === undefined) {
          logger?.log('error', 'storage: dropping log frames after repeated commit failures', { ...fields, sessions: sequenceRanges(batch) });
          return false;
        }
        logger?.log('warn', 'storage: log commit failed, retrying', { ...fields, retryInMs: delay });
        this.#reportLosses();
        const until = Date.now() + delay;
        await this.#runJobsAhead();
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())));
      }
    }
  }

  /**
   * While a log batch waits to be retried, the other writes queued (a session created, a record
   * updated) run: each answers at once, stored or with the database's own error (507 for a full
   * disk), instead of after every retry of the log frames queued before it. Log frames keep their
   * order; those jobs now run ahead of frames still being retried, which none of them depend on
   * (a prune keeps what is not committed yet, a ceiling raised early only helps).
   */
  async #runJobsAhead(): Promise<void> {
    for (let i = 1; i < this.#ops.length; ) {
      const op = this.#ops[i]!;
      if (op.kind !== 'job') {
        i++;
        continue;
      }
      this.#ops.splice(i, 1);
      await op.run();
    }
  }

  /** Drops the oldest log entries not being committed until the queue is down to 3/4 of its byte cap. */
  #makeRoom(): void {
    const target = this.#opts.maxQueuedBytes * 0.75;
    const dropped: LogEntry[] = [];
    for (let i = 0; i < this.#ops.length && this.#queuedBytes > target; ) {
      const op = this.#ops[i]!;
      if (op.kind !== 'log') {
        i++;
        continue;
      }
      const keep = i === 0 ? this.#inFlight : 0;
      let n = 0;
      while (keep + n < op.entries.length && this.#queuedBytes > target) this.#queuedBytes -= bytesOf(op.entries[keep + n++]!);
      dropped.push(...op.entries.splice(keep, n));
      // An emptied op goes, unless it is the head a commit is working on.
      if (op.entries.length === 0 && !(i === 0 && this.#draining)) this.#ops.splice(i, 1);
      else i++;
    }
    if (dropped.length === 0) return;
    this.#opts.logger?.log('error', 'storage: write queue full, dropping the oldest log frames not yet committed', {
      frames: dropped.length,
      maxQueuedBytes: this.#opts.maxQueuedBytes,
      sessions: sequenceRanges(dropped),
    });
    this.#giveUp(dropped, 'queue_full');
    this.#opts.onSettled(dropped, false);
  }

  #giveUp(entries: readonly LogEntry[], reason: LogLoss['reason']): void {
    this.#drops++;
    this.#losses.add(entries, reason);
  }

  #reportLosses(): void {
    const losses = this.#losses.take();
    if (losses.length > 0) this.#opts.onLost(losses);
  }
}

/** `{ sessionId: "first-last" }`, enough to tell which replay windows now have holes. */
function sequenceRanges(batch: readonly LogEntry[]): Record<string, string> {
  const ranges = new Map<string, [number, number]>();
  for (const { sessionId, sequence } of batch) {
    const range = ranges.get(sessionId);
    if (range === undefined) ranges.set(sessionId, [sequence, sequence]);
    else range[1] = sequence;
  }
  return Object.fromEntries([...ranges].map(([id, [first, last]]) => [id, `${first}-${last}`]));
}
