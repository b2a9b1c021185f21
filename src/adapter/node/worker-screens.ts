// Terminal emulators in one worker thread: the router's main thread only copies bytes to it.
// @xterm/headless parses at roughly half the rate a PTY can print, so on the main thread it would
// cap the output path; here it lags and catches up, and a snapshot waits for it.
import { Worker } from 'node:worker_threads';
import type { Logger, Screen, ScreenSnapshot } from '../../ports.ts';
import { workerEntry } from './package-files.ts';

export type ToWorker =
  | { t: 'create'; id: number; cols: number; rows: number }
  | { t: 'write'; id: number; data: Uint8Array; seq: number }
  | { t: 'resize'; id: number; cols: number; rows: number; seq: number }
  | { t: 'snapshot'; id: number; req: number; now: boolean }
  | { t: 'dispose'; id: number };

type FromWorker = { t: 'parsed'; id: number; bytes: number } | { t: 'snapshot'; req: number; snap?: ScreenSnapshot; error?: string };

interface Waiter {
  resolve(s: ScreenSnapshot): void;
  reject(e: Error): void;
}

export class WorkerScreens {
  private readonly worker: Worker;
  private nextId = 1;
  private nextReq = 1;
  private readonly waiters = new Map<number, Waiter>();
  /** Per screen: bytes sent to the worker and not parsed yet, and who hears of progress. */
  private readonly backlog = new Map<number, { pending: number; onParsed: ((bytes: number) => void) | undefined }>();

  /** Why the worker is gone (it failed or stopped), once it is: no screen can be snapshotted then. */
  private gone: string | null = null;

  constructor(private readonly logger: Logger) {
    this.worker = new Worker(workerEntry('screen-worker'));
    this.worker.unref();
    this.worker.on('message', (m: FromWorker) => this.onMessage(m));
    this.worker.on('error', (e) => {
      this.logger.log('error', 'screen worker failed', { error: String(e) });
      this.stopped(`the screen worker failed: ${String(e)}`);
    });
    this.worker.on('exit', (code) => this.stopped(`the screen worker stopped (exit code ${code})`));
  }

  /**
   * The emulators are gone with their worker: snapshots fail from now on (the client hears
   * KEYFRAME_UNAVAILABLE, docs/protocol.md §7.4), and bytes still waiting count as parsed, so
   * the flow gates (src/hub/session-flow.ts) do not hold PTY output for an emulator that is gone.
   */
  private stopped(reason: string): void {
    if (this.gone !== null) return;
    this.gone = reason;
    const error = new Error(reason);
    for (const w of this.waiters.values()) w.reject(error);
    this.waiters.clear();
    for (const backlog of this.backlog.values()) {
      const pending = backlog.pending;
      backlog.pending = 0;
      if (pending > 0) backlog.onParsed?.(pending);
    }
  }

  create(cols: number, rows: number, onParsed?: (bytes: number) => void): Screen {
    const id = this.nextId++;
    const backlog = { pending: 0, onParsed };
    this.backlog.set(id, backlog);
    this.post({ t: 'create', id, cols, rows });
    return {
      write: (data, seq) => {
        // A copy of exactly these bytes, transferred: cloning a view would copy its whole buffer.
        // Not data.slice(): on a Node Buffer that is a view, and transferring its (pooled) buffer
        // would detach bytes other messages still point into.
        if (this.gone !== null) {
          backlog.onParsed?.(data.byteLength);
          return;
        }
        const copy = new Uint8Array(data);
        backlog.pending += copy.byteLength;
        this.worker.postMessage({ t: 'write', id, data: copy, seq } satisfies ToWorker, [copy.buffer]);
      },
      resize: (cols, rows, seq) => this.post({ t: 'resize', id, cols, rows, seq }),
      snapshot: () => this.snapshot(id, false),
      snapshotNow: () => this.snapshot(id, true),
      backlog: () => backlog.pending,
      dispose: () => {
        this.backlog.delete(id);
        this.post({ t: 'dispose', id });
      },
    };
  }

  private snapshot(id: number, now: boolean): Promise<ScreenSnapshot> {
    if (this.gone !== null) return Promise.reject(new Error(this.gone));
    return new Promise<ScreenSnapshot>((resolve, reject) => {
      const req = this.nextReq++;
      this.waiters.set(req, { resolve, reject });
      this.post({ t: 'snapshot', id, req, now });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private post(m: ToWorker): void {
    this.worker.postMessage(m);
  }

  private onMessage(m: FromWorker): void {
    if (m.t === 'parsed') {
      const backlog = this.backlog.get(m.id);
      if (!backlog) return;
      backlog.pending -= m.bytes;
      backlog.onParsed?.(m.bytes);
      return;
    }
    const waiter = this.waiters.get(m.req);
    this.waiters.delete(m.req);
    if (!waiter) return;
    if (m.snap) waiter.resolve(m.snap);
    else waiter.reject(new Error(m.error ?? 'snapshot failed'));
  }
}
