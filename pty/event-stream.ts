// Session events on their way to the routers. They go to every connection that asked for them
// (`events`) and are held, in order, while none has: output printed while no router listens
// is delivered when one comes back. Each is numbered and kept until a router says it is journaled
// (`ack`, durability), so what a killed router had received but not logged is sent again to the
// next one (docs/protocol.md §3.4). And the rules every PTY follows: all are paused while nobody
// receives, or while some receiver's socket is full (link backpressure); one is paused while the
// router has not taken its credit loop's high mark of its output (credit-loop.ts, §9.3), or while
// it rests so that another session's typing goes first (bulk-pacing.ts).

import type { Logger } from '../src/ports/logger.ts';
import type { PtyExit, PtySessionInfo } from '../src/ports/pty-host.ts';
import { HOST_UNACKED_KEEP_BYTES, OUTPUT_BATCH_MAX_BYTES, OUTPUT_BATCH_MS, STREAMING_READ_BYTES } from '../src/core/flow-budget.ts';
import type { Connection } from './connection.ts';
import { BulkPacing } from './bulk-pacing.ts';
import { CreditLoop } from './wire/credit-loop.ts';
import { HostEvent } from './host-event.ts';

/*
 * A PTY is read 4 KiB at a time. A read that filled most of that means more is coming: it waits
 * up to OUTPUT_BATCH_MS with what follows, and goes out as one `data` frame that fits in
 * OUTPUT_FRAME_MAX_BYTES (src/core/flow-budget.ts, with the router's read size) — a few large frames
 * for the router to number, log and send instead of thousands of small ones. A short read (a
 * keystroke's echo, the end of a burst) goes out at once with what waits before it, so batching
 * costs no interactive latency.
 */

/** What a router already logged of this host's events: the highest `n` per session. */
export interface Resume {
  epoch: string;
  after: Record<string, number>;
}

export class EventStream {
  readonly #log: Logger;
  readonly #onFlow: (sessionId?: string) => void;
  /**
   * Each with whether it reads output in binary form (`events {binaryData}`, docs/protocol.md §9.2),
   * and its credit loop when it gives credit back (`events {credit}`).
   */
  readonly #subscribers = new Map<Connection, { binary: boolean; credit: CreditLoop | undefined }>();
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
  /** Output not sent yet, per session (see OUTPUT_BATCH_MAX_BYTES). */
  readonly #batches = new Map<string, { chunks: Buffer[]; bytes: number }>();
  #batchTimer: ReturnType<typeof setTimeout> | undefined;
  #paused = true;
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
  subscribe(conn: Connection, resume?: Resume, binary = false, credit = false): void {
    if (this.#subscribers.has(conn)) return;
    const loop = credit ? new CreditLoop() : undefined;
    this.#subscribers.set(conn, { binary, credit: loop });
    const after = resume?.epoch === this.#epoch ? resume.after : {};
    for (const [sessionId, n] of Object.entries(after)) this.ack(sessionId, n);
    let paused = false;
    for (const e of this.#unacked) {
      if (e.n <= (this.#acked.get(e.sessionId) ?? 0) || e.n <= (after[e.sessionId] ?? 0)) continue;
      conn.send(e.frame(binary));
      if (loop && e.bytes > 0) paused = loop.sent(e.sessionId, e.bytes) || paused;
    }
    this.#unreported.clear();
    if (!this.#updateFlow() && paused) this.#onFlow();
  }

  /** Durability: a router journaled the session's events up to `n`, so they need no resend. */
  ack(sessionId: string, n: number): void {
    if (n <= (this.#acked.get(sessionId) ?? 0)) return;
    this.#acked.set(sessionId, n);
    let drop = 0;
    while (drop < this.#unacked.length && this.#isAcked(this.#unacked[drop]!)) this.#unackedBytes -= this.#unacked[drop++]!.bytes;
    this.#unacked.splice(0, drop);
  }

  /** The credit loop: the connection's router took `bytes` more of the session's output. */
  credit(conn: Connection, sessionId: string, bytes: number): void {
    if (this.#subscribers.get(conn)?.credit?.taken(sessionId, bytes)) this.#onFlow(sessionId);
  }

  congestion(conn: Connection, congested: boolean): void {
    if (congested) this.#congested.add(conn);
    else this.#congested.delete(conn);
    this.#updateFlow();
  }

  closed(conn: Connection): void {
    const released = this.#subscribers.get(conn)?.credit?.anyPaused === true;
    this.#subscribers.delete(conn);
    this.#congested.delete(conn);
    if (!this.#updateFlow() && released) this.#onFlow();
  }

  /** Whether this session's PTY must not be read now (all are paused, its credit is spent, or it rests). */
  sessionPaused(sessionId: string): boolean {
    if (this.#paused || this.#resting.has(sessionId)) return true;
    for (const { credit } of this.#subscribers.values()) if (credit?.paused(sessionId)) return true;
    return false;
  }

  /** Whether any PTY is paused, for whatever reason. */
  get anyPaused(): boolean {
    if (this.#paused || this.#resting.size > 0) return true;
    for (const { credit } of this.#subscribers.values()) if (credit?.anyPaused) return true;
    return false;
  }

  /** Someone typed into the session (bulk-pacing.ts). */
  input(sessionId: string): void {
    this.#pacing.input(sessionId);
  }

  output(sessionId: string, chunk: Buffer): void {
    this.#rest(sessionId, this.#pacing.output(sessionId, chunk.byteLength));
    // Sent before it would outgrow a frame that fits the router's reads whole (src/core/flow-budget.ts).
    if ((this.#batches.get(sessionId)?.bytes ?? 0) + chunk.byteLength > OUTPUT_BATCH_MAX_BYTES) this.#flush(sessionId);
    let batch = this.#batches.get(sessionId);
    if (!batch) this.#batches.set(sessionId, (batch = { chunks: [], bytes: 0 }));
    batch.chunks.push(chunk);
    batch.bytes += chunk.byteLength;
    if (batch.bytes >= OUTPUT_BATCH_MAX_BYTES || chunk.byteLength < STREAMING_READ_BYTES) this.#flush(sessionId);
    else if (this.#batchTimer === undefined) this.#batchTimer = setTimeout(() => this.#flushAll(), OUTPUT_BATCH_MS);
  }

  /** The session ended: after the rest of its output, its exit. */
  exit(info: PtySessionInfo, exit: PtyExit): void {
    this.#flush(info.sessionId);
    for (const { credit } of this.#subscribers.values()) credit?.forget(info.sessionId);
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
    this.#emit(HostEvent.output(sessionId, ++this.#n, batch.chunks, batch.bytes));
    let paused = false;
    for (const { credit } of this.#subscribers.values()) paused = credit?.sent(sessionId, batch.bytes) === true || paused;
    if (paused) {
      this.#log.log('debug', 'session output held: the router has not taken it', { sessionId });
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

  #emit(e: HostEvent): void {
    this.#unacked.push(e);
    this.#unackedBytes += e.bytes;
    if (this.#unackedBytes > HOST_UNACKED_KEEP_BYTES) this.#forgetOldest();
    for (const [conn, { binary }] of this.#subscribers) conn.send(e.frame(binary));
  }

  #isAcked(e: HostEvent): boolean {
    return e.n <= (this.#acked.get(e.sessionId) ?? 0);
  }

  #forgetOldest(): void {
    let drop = 0;
    while (drop < this.#unacked.length && this.#unackedBytes > HOST_UNACKED_KEEP_BYTES * 0.75) this.#unackedBytes -= this.#unacked[drop++]!.bytes;
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
