// Session events on their way to the routers. They go to every connection that asked for them
// (`events`) and are held, in order, while none has: output printed while no router listens
// is delivered when one comes back. Each is numbered and kept until a router acknowledges it
// (`ack`), so what a killed router had received but not logged is sent again to the next one
// (docs/protocol.md §3.4). And the flow rules every PTY follows: all are paused while nobody
// receives, or while some receiver's socket is full; one is paused while a receiver holds it
// (`flow`: the router is behind on that session alone, docs/protocol.md §9.3); one is paused while
// it has a window's worth of output unacknowledged (output-credit.ts), or while it rests so that
// another session's typing goes first (bulk-pacing.ts).

import type { Logger, PtyExit, PtySessionInfo } from '../src/ports.ts';
import type { Connection } from './connection.ts';
import { BulkPacing } from './bulk-pacing.ts';
import { HostEvent } from './host-event.ts';
import { OutputCredit } from './output-credit.ts';

/**
 * A PTY is read 4 KiB at a time. A read that filled most of that means more is coming: it waits
 * up to BATCH_MS with what follows, and goes out as one `data` message of up to MAX_BATCH_BYTES —
 * a few large frames for the router to number, log and send instead of thousands of small ones.
 * A short read (a keystroke's echo, the end of a burst) goes out at once with what waits before
 * it, so batching costs no interactive latency.
 */
const BATCH_MS = 2;
const MAX_BATCH_BYTES = 64 * 1024;
const STREAMING_READ_BYTES = 2048;
/** Unacknowledged events kept at most (a router that never acknowledges): beyond, the oldest go. */
const MAX_UNACKED_BYTES = 64 * 1024 * 1024;

/** What a router already logged of this host's events: the highest `n` per session. */
export interface Resume {
  epoch: string;
  after: Record<string, number>;
}

export class EventStream {
  readonly #log: Logger;
  readonly #onFlow: (sessionId?: string) => void;
  /** Sessions some connection holds paused, and which connections do. */
  readonly #holds = new Map<string, Set<Connection>>();
  /** Each with whether it reads output in binary form (`events {binaryData}`, docs/protocol.md §9.2), and the window it asked for. */
  readonly #subscribers = new Map<Connection, { binary: boolean; window: number | undefined }>();
  /** Subscribers whose socket buffer is full. */
  readonly #congested = new Set<Connection>();
  /** Events no router has acknowledged yet (sent, or held while none listened), oldest first. */
  readonly #unacked: HostEvent[] = [];
  #unackedBytes = 0;
  /** Per session, the highest event number acknowledged. */
  readonly #acked = new Map<string, number>();
  #n = 0;
  readonly #epoch: string;
  /** Sessions whose exit is among the held events. */
  readonly #unreported = new Map<string, PtySessionInfo>();
  /** Output not sent yet, per session (see MAX_BATCH_BYTES). */
  readonly #batches = new Map<string, { chunks: Buffer[]; bytes: number }>();
  #batchTimer: ReturnType<typeof setTimeout> | undefined;
  #paused = true;
  readonly #credit = new OutputCredit();
  readonly #pacing = new BulkPacing();
  /** Sessions resting for another's typing (bulk-pacing.ts), with the timer that ends the rest. */
  readonly #resting = new Map<string, ReturnType<typeof setTimeout>>();

  /**
   * `onFlow` hears every change of which PTYs must be paused (all must, at first): then ask
   * sessionPaused() of each, or of the one session it names. `epoch` names this host process for its event numbers.
   */
  constructor(log: Logger, onFlow: (sessionId?: string) => void, epoch: string) {
    this.#log = log;
    this.#onFlow = onFlow;
    this.#epoch = epoch;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** Sessions that ended while nobody received events: `list` still names them. */
  get unreported(): PtySessionInfo[] {
    return [...this.#unreported.values()];
  }

  isUnreported(sessionId: string): boolean {
    return this.#unreported.has(sessionId);
  }

  /**
   * The connection receives events from now on, starting with every one not acknowledged yet,
   * but those `resume` says its router logged already (when they are this host's).
   */
  subscribe(conn: Connection, resume?: Resume, binary = false, window?: number): void {
    if (this.#subscribers.has(conn)) return;
    this.#subscribers.set(conn, { binary, window });
    const after = resume?.epoch === this.#epoch ? resume.after : {};
    // What the router logged already is as good as acknowledged: it holds no credit.
    for (const [sessionId, n] of Object.entries(after)) this.ack(sessionId, n);
    for (const e of this.#unacked) {
      if (e.n > (this.#acked.get(e.sessionId) ?? 0) && e.n > (after[e.sessionId] ?? 0)) conn.send(e.frame(binary));
    }
    this.#unreported.clear();
    const credit = this.#applyWindow();
    if (!this.#updateFlow() && credit) this.#onFlow();
  }

  /** A router logged the session's events up to `n`. */
  ack(sessionId: string, n: number): void {
    if (n <= (this.#acked.get(sessionId) ?? 0)) return;
    if (this.#credit.acked(sessionId, n)) this.#onFlow(sessionId);
    this.#acked.set(sessionId, n);
    let drop = 0;
    while (drop < this.#unacked.length && this.#isAcked(this.#unacked[drop]!)) this.#unackedBytes -= this.#unacked[drop++]!.bytes;
    this.#unacked.splice(0, drop);
  }

  congestion(conn: Connection, congested: boolean): void {
    if (congested) this.#congested.add(conn);
    else this.#congested.delete(conn);
    this.#updateFlow();
  }

  closed(conn: Connection): void {
    this.#subscribers.delete(conn);
    this.#congested.delete(conn);
    let released = false;
    for (const [sessionId, holders] of this.#holds) {
      if (!holders.delete(conn)) continue;
      if (holders.size === 0) this.#holds.delete(sessionId);
      released = true;
    }
    const credit = this.#applyWindow();
    if (!this.#updateFlow() && (released || credit)) this.#onFlow();
  }

  /** The connection holds the session's PTY paused (`paused`), or lets it go. */
  hold(conn: Connection, sessionId: string, paused: boolean): void {
    let holders = this.#holds.get(sessionId);
    if (paused) {
      if (!holders) this.#holds.set(sessionId, (holders = new Set()));
      if (holders.has(conn)) return;
      holders.add(conn);
    } else {
      if (!holders?.delete(conn)) return;
      if (holders.size === 0) this.#holds.delete(sessionId);
    }
    this.#log.log('debug', paused ? 'session output paused' : 'session output resumed', { sessionId });
    this.#onFlow();
  }

  /** Whether this session's PTY must not be read now (all are paused, or a receiver holds it). */
  sessionPaused(sessionId: string): boolean {
    return this.#paused || this.#holds.has(sessionId) || this.#credit.exhausted(sessionId) || this.#resting.has(sessionId);
  }

  /** Whether any PTY is paused, for whatever reason. */
  get anyPaused(): boolean {
    return this.#paused || this.#holds.size > 0 || this.#credit.anyExhausted || this.#resting.size > 0;
  }

  /** Someone typed into the session (bulk-pacing.ts). */
  input(sessionId: string): void {
    this.#pacing.input(sessionId);
  }

  output(sessionId: string, chunk: Buffer): void {
    this.#rest(sessionId, this.#pacing.output(sessionId, chunk.byteLength));
    let batch = this.#batches.get(sessionId);
    if (!batch) this.#batches.set(sessionId, (batch = { chunks: [], bytes: 0 }));
    batch.chunks.push(chunk);
    batch.bytes += chunk.byteLength;
    if (batch.bytes >= MAX_BATCH_BYTES || chunk.byteLength < STREAMING_READ_BYTES) this.#flush(sessionId);
    else if (this.#batchTimer === undefined) this.#batchTimer = setTimeout(() => this.#flushAll(), BATCH_MS);
  }

  /** The session ended: after the rest of its output, its exit. */
  exit(info: PtySessionInfo, exit: PtyExit): void {
    this.#flush(info.sessionId);
    this.#holds.delete(info.sessionId);
    this.#credit.forget(info.sessionId);
    this.#pacing.forget(info.sessionId);
    clearTimeout(this.#resting.get(info.sessionId));
    this.#resting.delete(info.sessionId);
    if (this.#subscribers.size === 0) this.#unreported.set(info.sessionId, { ...info });
    this.#emit(HostEvent.exit(info.sessionId, ++this.#n, exit));
  }

  stop(): void {
    clearTimeout(this.#batchTimer);
    for (const timer of this.#resting.values()) clearTimeout(timer);
    this.#resting.clear();
  }

  #flushAll(): void {
    this.#batchTimer = undefined;
    try {
      for (const sessionId of [...this.#batches.keys()]) this.#flush(sessionId);
    } catch (err) {
      this.#log.log('error', 'output flush failed', { err });
    }
  }

  #flush(sessionId: string): void {
    const batch = this.#batches.get(sessionId);
    if (!batch) return;
    this.#batches.delete(sessionId);
    const n = ++this.#n;
    const exhausted = this.#credit.sent(sessionId, n, batch.bytes);
    this.#emit(HostEvent.output(sessionId, n, batch.chunks, batch.bytes));
    if (exhausted) {
      this.#log.log('debug', 'session output held: its window is full', { sessionId, window: this.#credit.window });
      this.#onFlow(sessionId);
    }
  }

  #rest(sessionId: string, ms: number): void {
    if (ms <= 0 || this.#resting.has(sessionId)) return;
    this.#resting.set(
      sessionId,
      setTimeout(() => {
        this.#resting.delete(sessionId);
        this.#onFlow(sessionId);
      }, ms),
    );
    this.#onFlow(sessionId);
  }

  /** The window every subscriber asked for (the smallest), or none when one did not ask; true when a session's verdict changed. */
  #applyWindow(): boolean {
    const windows = [...this.#subscribers.values()].map((s) => s.window);
    const window = windows.length > 0 && windows.every((w) => w !== undefined) ? Math.min(...(windows as number[])) : undefined;
    return window === this.#credit.window ? false : this.#credit.setWindow(window);
  }

  #emit(e: HostEvent): void {
    this.#unacked.push(e);
    this.#unackedBytes += e.bytes;
    if (this.#unackedBytes > MAX_UNACKED_BYTES) this.#forgetOldest();
    for (const [conn, { binary }] of this.#subscribers) conn.send(e.frame(binary));
  }

  #isAcked(e: HostEvent): boolean {
    return e.n <= (this.#acked.get(e.sessionId) ?? 0);
  }

  #forgetOldest(): void {
    let drop = 0;
    while (drop < this.#unacked.length && this.#unackedBytes > MAX_UNACKED_BYTES * 0.75) this.#unackedBytes -= this.#unacked[drop++]!.bytes;
    const gone = this.#unacked.splice(0, drop);
    this.#log.log('warn', 'no router acknowledges events: the oldest are no longer kept for a resend', { events: gone.length, through: gone.at(-1)?.n });
  }

  /** True when it told onFlow of a change. */
  #updateFlow(): boolean {
    const paused = this.#subscribers.size === 0 || this.#congested.size > 0;
    if (paused === this.#paused) return false;
    this.#paused = paused;
    this.#log.log('debug', paused ? 'output paused' : 'output resumed', { subscribers: this.#subscribers.size, congested: this.#congested.size });
    this.#onFlow();
    return true;
  }
}
