// The replay log's group commits, in a worker thread with its own connection to the database file.
// The router's main thread only posts each commit's statements and awaits the answer; reads and
// every other write stay on the store's client (storage/log-committer.ts says why they never
// compete for the write lock).
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../ports/logger.ts';
import type { LogCommitter, LogDatabase, LogStatement } from '../../../storage/log-committer.ts';
import { workerEntry } from './package-files.ts';

export type ToLogWorker = { t: 'commit'; id: number; statements: LogStatement[] } | { t: 'close' };

export type FromLogWorker = { t: 'committed'; id: number } | { t: 'failed'; id: number; error: CommitFailure };

/** A failed commit's error as plain data, as libSQL reported it in the worker. */
export interface CommitFailure {
  name: string;
  message: string;
  /** Where it was thrown, in the worker. */
  stack?: string;
  code?: string;
  extendedCode?: string;
  rawCode?: number;
}

/** A commit that failed in the worker: the same name, message, stack and codes as there. */
export class LogCommitError extends Error {
  readonly code: string | undefined;
  readonly extendedCode: string | undefined;
  readonly rawCode: number | undefined;

  constructor(failure: CommitFailure) {
    super(failure.message);
    this.name = failure.name;
    if (failure.stack !== undefined) this.stack = failure.stack;
    this.code = failure.code;
    this.extendedCode = failure.extendedCode;
    this.rawCode = failure.rawCode;
  }
}

interface Pending {
  resolve(): void;
  reject(err: Error): void;
}

/** A thread running log-commit-worker.ts against `db`. */
export function logCommitWorker(db: LogDatabase): Worker {
  return new Worker(workerEntry('log-commit-worker'), { workerData: db });
}

/**
 * The Node router's committers: a worker thread for a file database; none (the store's client)
 * for a remote one, whose driver already waits for the server off the thread.
 */
export function nodeLogCommitterFor(logger: Logger): (db: LogDatabase) => LogCommitter | undefined {
  return (db) => (db.url.startsWith('file:') ? WorkerLogCommitter.start(() => logCommitWorker(db), logger) : undefined);
}

/**
 * One message per commit, one answer. A worker that dies fails its pending commits (the write
 * queue retries them) and the next commit starts a new one. An idle worker does not keep the
 * process alive; one with a commit pending does, until the answer.
 */
export class WorkerLogCommitter implements LogCommitter {
  readonly #spawn: () => Worker;
  readonly #logger: Logger;
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;

  private constructor(spawn: () => Worker, logger: Logger) {
    this.#spawn = spawn;
    this.#logger = logger;
  }

  /** Starts the first worker now: loading it takes a few hundred ms that the first commit would otherwise wait. */
  static start(spawn: () => Worker, logger: Logger): WorkerLogCommitter {
    const committer = new WorkerLogCommitter(spawn, logger);
    committer.#worker = committer.#startWorker();
    return committer;
  }

  commit(statements: LogStatement[]): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('storage: the log committer is closed'));
    const worker = (this.#worker ??= this.#startWorker());
    return new Promise<void>((resolve, reject) => {
      const id = this.#nextId++;
      if (this.#pending.size === 0) worker.ref();
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ t: 'commit', id, statements } satisfies ToLogWorker);
    });
  }

  /** Ends the worker once it has answered every commit sent before (it handles messages in order) and closed its connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const worker = this.#worker;
    if (worker === undefined) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // Unreferenced, it could be cut off by the process's exit while it closes its connection.
    worker.ref();
    worker.postMessage({ t: 'close' } satisfies ToLogWorker);
    await exited;
  }

  #startWorker(): Worker {
    const worker = this.#spawn();
    worker.unref();
    worker.on('message', (m: FromLogWorker) => this.#answer(worker, m));
    worker.on('error', (err) => this.#lost(worker, err));
    worker.on('exit', (code) => this.#lost(worker, new Error(`storage: the log commit worker exited (code ${code})`)));
    return worker;
  }

  #answer(worker: Worker, m: FromLogWorker): void {
    const pending = this.#pending.get(m.id);
    if (pending === undefined) return;
    this.#pending.delete(m.id);
    if (this.#pending.size === 0 && !this.#closed) worker.unref();
    if (m.t === 'committed') pending.resolve();
    else pending.reject(new LogCommitError(m.error));
  }

  /** The worker is gone: its pending commits fail with `err`, and the next commit starts another. */
  #lost(worker: Worker, err: Error): void {
    // A crash is reported twice ('error', then 'exit'): the first one counts.
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    if (!this.#closed) {
      this.#logger.log('error', 'storage: the log commit worker stopped; the next commit starts a new one', { error: err, pendingCommits: this.#pending.size });
    }
    for (const pending of this.#pending.values()) pending.reject(err);
    this.#pending.clear();
  }
}
