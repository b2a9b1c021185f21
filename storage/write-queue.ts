import type { LogEntry, Logger } from '../src/ports.ts';

export interface WriteQueueOptions {
  /** Commits one batch of log entries in a single write transaction. */
  commitLog(batch: readonly LogEntry[]): Promise<void>;
  /** Called once per batch as it leaves the queue, committed or given up on. */
  onSettled(batch: readonly LogEntry[]): void;
  flushIntervalMs: number;
  maxBatch: number;
  /** Waits before each retry of a failed log commit; the batch is dropped when they run out. */
  retryDelaysMs: readonly number[];
  logger?: Logger;
}

type Op =
  | { kind: 'log'; entries: LogEntry[] }
  | { kind: 'job'; run: () => Promise<void> }
  | { kind: 'barrier'; dropsBefore: number; resolve: () => void; reject: (err: Error) => void };

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
  /** Log batches given up on so far; a flush that saw one fail rejects. */
  #drops = 0;

  constructor(opts: WriteQueueOptions) {
    this.#opts = opts;
  }

  appendLog(entry: LogEntry): void {
    const tail = this.#ops.at(-1);
    if (tail?.kind === 'log') tail.entries.push(entry);
    else this.#ops.push({ kind: 'log', entries: [entry] });
    this.#schedule();
  }

  /** Runs `work` alone, after every write queued before it. Its failure is the caller's: no retry. */
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

  /** Resolves once everything queued before the call is done; rejects if log frames among it were dropped. */
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
      if (op.kind === 'log') {
        await this.#commitHead(op.entries);
        continue;
      }
      if (op.kind === 'job') await op.run();
      else if (this.#drops > op.dropsBefore) op.reject(new Error('storage: some log frames could not be committed'));
      else op.resolve();
      this.#ops.shift();
    }
    this.#draining = false;
  }

  async #commitHead(entries: LogEntry[]): Promise<void> {
    const batch = entries.slice(0, this.#opts.maxBatch);
    await this.#commitWithRetry(batch);
    // Appends may have grown the head meanwhile; only the committed prefix leaves.
    entries.splice(0, batch.length);
    if (entries.length === 0) this.#ops.shift();
    this.#opts.onSettled(batch);
  }

  async #commitWithRetry(batch: readonly LogEntry[]): Promise<void> {
    const { retryDelaysMs, logger } = this.#opts;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#opts.commitLog(batch);
        return;
      } catch (err) {
        const delay = retryDelaysMs[attempt];
        const fields = { frames: batch.length, attempt: attempt + 1, error: errorMessage(err) };
        if (delay === undefined) {
          this.#drops++;
          logger?.log('error', 'storage: dropping log frames after repeated commit failures', {
            ...fields,
            sessions: sequenceRanges(batch),
          });
          return;
        }
        logger?.log('warn', 'storage: log commit failed, retrying', { ...fields, retryInMs: delay });
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
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
