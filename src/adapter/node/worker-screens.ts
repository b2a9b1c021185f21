// Terminal emulators in one worker thread: the router's main thread only copies bytes to it.
// @xterm/headless parses at roughly half the rate a PTY can print, so on the main thread it would
// cap the output path; here it lags and catches up, and a snapshot waits for it.
//
// Small writes (a keystroke's echo, a prompt) are held for up to HOLD_MS and go to the worker
// together: each message wakes the worker and its `parsed` answer wakes the main thread again,
// and under fast typing those wake-ups ran beside the next keystroke's echo on a 2-core machine
// (docs/performance.md, "Background work off the echo path"). A write of a frame's size goes at
// once (a flood is not delayed), and a resize, snapshot or dispose sends what is held first, so
// the worker sees every screen's writes in order and a snapshot is never short of one.
import { Worker } from 'node:worker_threads';
import { concatBytes } from '../../core/bytes.ts';
import type { Logger } from '../../ports/logger.ts';
import type { Screen, ScreenSnapshot } from '../../ports/screen.ts';
import type { FromWorker, ToWorker } from './screen-worker-messages.ts';
import { workerEntry } from './package-files.ts';

/** Writes below this size are held (until they add up to it); one of this size goes at once, after what is held. */
const HOLD_BELOW_BYTES = 4096;
/** The longest a held write waits. */
const HOLD_MS = 20;
/** A worker that dies this soon after it was started again is not started again. */
const RESTART_WITHIN_MS = 60_000;

interface Waiter {
  id: number;
  resolve(s: ScreenSnapshot): void;
  reject(e: Error): void;
}

/** One screen's bytes sent or held and not parsed yet, who hears of progress and of failure, and what is held. */
interface Backlog {
  pending: number;
  onParsed: ((bytes: number) => void) | undefined;
  onFailed: ((error: Error) => void) | undefined;
  /** Why its emulator failed, once it has: writes count as parsed and snapshots fail from then on. */
  failed: Error | null;
  held: Uint8Array[];
  heldBytes: number;
  heldSeq: number;
}

export class WorkerScreens {
  private worker: Worker;
  private nextId = 1;
  private nextReq = 1;
  private readonly waiters = new Map<number, Waiter>();
  private readonly backlog = new Map<number, Backlog>();
  /** The screens holding small writes, and the timer that sends them. */
  private readonly holding = new Set<number>();
  private holdTimer: ReturnType<typeof setTimeout> | undefined;

  /** Why the worker is gone (it failed or stopped), once it is: no screen can be snapshotted then. */
  private gone: string | null = null;
  private closing = false;
  /** When the worker was last started again after it died (0: never). */
  private restartedAt = 0;

  constructor(
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    this.worker = this.start();
  }

  private start(): Worker {
    const worker = new Worker(workerEntry('screen-worker'));
    worker.unref();
    worker.on('message', (m: FromWorker) => {
      if (worker === this.worker) this.onMessage(m);
    });
    worker.on('error', (e) => this.died(worker, `the screen worker failed: ${String(e)}`, e));
    worker.on('exit', (code) => this.died(worker, `the screen worker stopped (exit code ${code})`));
    return worker;
  }

  /**
   * The worker ended. Stopped by close(): the screens are gone for good. Died (a failure outside
   * any one emulator, e.g. out of memory): every screen fails, so its owner rebuilds it from the
   * log (src/screen/session-screen.ts) on a new worker, unless the last one died within
   * RESTART_WITHIN_MS of being started: then nothing is started again (a crash loop would
   * rebuild every session's screen each time).
   */
  private died(worker: Worker, reason: string, error?: Error): void {
    if (worker !== this.worker || this.gone !== null) return;
    const now = this.clock();
    if (this.closing || (this.restartedAt > 0 && now - this.restartedAt < RESTART_WITHIN_MS)) {
      if (!this.closing) this.logger.log('error', 'screen worker failed again soon after its restart: Keyframes are unavailable until the router restarts', { reason, error });
      return this.stopped(reason);
    }
    this.logger.log('error', 'screen worker failed: starting another, every screen is rebuilt from the log', { reason, error });
    this.restartedAt = now;
    this.worker = this.start();
    const failure = new Error(reason, { cause: error });
    for (const id of [...this.backlog.keys()]) this.failed(id, failure);
    this.rejectWaiters(failure);
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
    clearTimeout(this.holdTimer);
    for (const [id, backlog] of this.backlog) this.abandon(id, backlog, error);
    this.rejectWaiters(error);
  }

  create(cols: number, rows: number, onParsed?: (bytes: number) => void, onFailed?: (error: Error) => void): Screen {
    const id = this.nextId++;
    const backlog: Backlog = { pending: 0, onParsed, onFailed, failed: null, held: [], heldBytes: 0, heldSeq: 0 };
    this.backlog.set(id, backlog);
    this.post({ t: 'create', id, cols, rows });
    return {
      write: (data, seq) => {
        if (this.gone !== null || backlog.failed) {
          backlog.onParsed?.(data.byteLength);
          return;
        }
        backlog.pending += data.byteLength;
        if (data.byteLength >= HOLD_BELOW_BYTES) {
          // What is held goes first, on its own: a frame of a flood is copied once, not again into the held ones.
          this.release(id);
          return this.send(id, data, seq);
        }
        // Kept as they are: a frame's bytes never change (Screen.write); release() copies them into one.
        backlog.held.push(data);
        backlog.heldBytes += data.byteLength;
        backlog.heldSeq = seq;
        if (backlog.heldBytes >= HOLD_BELOW_BYTES) this.release(id);
        else this.hold(id);
      },
      resize: (cols, rows, seq) => this.post({ t: 'resize', id, cols, rows, seq }),
      snapshot: () => this.snapshot(id, false),
      snapshotNow: () => this.snapshot(id, true),
      backlog: () => backlog.pending,
      dispose: () => {
        this.backlog.delete(id);
        this.holding.delete(id);
        this.post({ t: 'dispose', id });
      },
    };
  }

  /**
   * Transfers `data`'s buffer when it is this object's own (`owned`), else a copy of exactly these
   * bytes: cloning a view would copy its whole buffer, and transferring the caller's buffer would
   * detach bytes other frames and messages still point into.
   */
  private send(id: number, data: Uint8Array, seq: number, owned = false): void {
    const copy = owned ? data : new Uint8Array(data);
    this.worker.postMessage({ t: 'write', id, data: copy, seq } satisfies ToWorker, [copy.buffer as ArrayBuffer]);
  }

  private hold(id: number): void {
    this.holding.add(id);
    this.holdTimer ??= setTimeout(() => {
      this.holdTimer = undefined;
      for (const held of [...this.holding]) this.release(held);
    }, HOLD_MS).unref();
  }

  /** Sends what screen `id` holds, as one write anchored at the last of them. */
  private release(id: number): void {
    this.holding.delete(id);
    const backlog = this.backlog.get(id);
    if (!backlog || backlog.heldBytes === 0 || this.gone !== null) return;
    const { held, heldSeq } = backlog;
    backlog.held = [];
    backlog.heldBytes = 0;
    this.send(id, concatBytes(held), heldSeq, held.length > 1);
  }

  private snapshot(id: number, now: boolean): Promise<ScreenSnapshot> {
    if (this.gone !== null) return Promise.reject(new Error(this.gone));
    const failed = this.backlog.get(id)?.failed;
    if (failed) return Promise.reject(failed);
    return new Promise<ScreenSnapshot>((resolve, reject) => {
      const req = this.nextReq++;
      this.waiters.set(req, { id, resolve, reject });
      this.post({ t: 'snapshot', id, req, now });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.holdTimer);
    await this.worker.terminate();
  }

  /**
   * One screen's emulator failed in the worker: its snapshots fail, its unparsed bytes count as
   * parsed (as when the worker is gone), and its owner hears of it.
   */
  private failed(id: number, error: Error): void {
    const backlog = this.backlog.get(id);
    if (!backlog || backlog.failed) return;
    backlog.failed = error;
    this.abandon(id, backlog, error);
    backlog.onFailed?.(error);
  }

  /** A screen's emulator is gone: what it holds is dropped, its snapshots fail, its unparsed bytes count as parsed. */
  private abandon(id: number, backlog: Backlog, error: Error): void {
    this.holding.delete(id);
    backlog.held = [];
    backlog.heldBytes = 0;
    this.rejectWaiters(error, id);
    const pending = backlog.pending;
    backlog.pending = 0;
    if (pending > 0) backlog.onParsed?.(pending);
  }

  /** Fails the snapshots waiting for screen `id`, or for any screen. */
  private rejectWaiters(error: Error, id?: number): void {
    for (const [req, w] of this.waiters) {
      if (id !== undefined && w.id !== id) continue;
      this.waiters.delete(req);
      w.reject(error);
    }
  }

  /** A message about screen `id`, after the writes it holds. */
  private post(m: ToWorker): void {
    if (m.t !== 'create') this.release(m.id);
    this.worker.postMessage(m);
  }

  private onMessage(m: FromWorker): void {
    if (m.t === 'failed') return this.failed(m.id, new Error(`the screen model failed: ${m.error.message}`, { cause: m.error }));
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
