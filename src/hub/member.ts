// One joined connection as the session sees it: its role, and the ordered delivery of its frames.
// A connection that stops reading is *lagged*: its Output is dropped (never the PTY's or another
// client's problem) until its socket drains, then it gets PTY_OUTPUT_LAGGED and a fresh Keyframe.
import type { ClientConnection } from '../ports/client-connection.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { Role } from '../protocol/pty-payloads.ts';
import type { JoinRights } from './join-spec.ts';
import type { LogFrame, Unicast } from './types.ts';
import { CLOSE } from '../protocol/close-codes.ts';
import { encodeUnicast } from './wire.ts';

export interface LagPolicy {
  /** Bytes queued on the socket beyond which Output is dropped for this connection. */
  highBytes: number;
  /** Bytes queued on the socket under which it has caught up. */
  lowBytes: number;
  /** How often a lagged connection's socket is checked. */
  pollMs: number;
}

/**
 * Whether its Output reaches it:
 * - `flowing`: every frame goes out (the socket is checked against the high mark on each Output).
 * - `lagged`: its socket passed the high mark (or a replay was given up on it): Output is dropped
 *   and `poll` checks the socket until it drains. `droppedFrom`: the first Output frame dropped
 *   since it last caught up, null while none has been.
 * - `closed`: its socket closed; nothing more is read for it.
 */
type Delivery =
  | { state: 'flowing' }
  | { state: 'lagged'; poll: ReturnType<typeof setInterval>; droppedFrom: number | null }
  | { state: 'closed' };

/**
 * Whether a flush (join, requested Keyframe, lag recovery) is under way: `holding` keeps the live
 * log frames produced meanwhile, in order, and a goodbye said meanwhile goes out right after it.
 */
type Flush = { state: 'none' } | { state: 'holding'; held: LogFrame[]; goodbye: Goodbye | null };

type Goodbye = Extract<Unicast, { kind: 'Goodbye' }>;

export class Member {
  role: Role = 'observer';
  /** The connection's audit logger (principal, scopes, peer); role events are logged through it. */
  audit: Logger | undefined;
  /** A member can fall behind during its flush: the two are independent. */
  private delivery: Delivery = { state: 'flowing' };
  private flush: Flush = { state: 'none' };
  /** Highest log-frame sequence delivered: nothing at or below it is sent again. */
  private cursor = 0;
  /** Output at or below this sequence is already in a Keyframe this member got. */
  private outputFloor = 0;

  constructor(
    private readonly conn: ClientConnection,
    readonly clientId: string,
    readonly label: string | undefined,
    /** What its principal may do: fixed for the connection's life. */
    readonly rights: JoinRights,
    /** Stamps its unicast frames as they are encoded. */
    private readonly clock: Clock,
    private readonly lag: LagPolicy,
    /** Called once the socket of a lagged member has drained. */
    private readonly onCaughtUp: (m: Member) => void,
  ) {}

  /** False for a principal with only pty:observe. */
  get mayControl(): boolean {
    return this.rights.mayControl;
  }

  get binary(): boolean {
    return this.conn.binary;
  }

  /** Bytes queued on its socket and not sent yet (per-session flow control, session-flow.ts). */
  get queued(): number {
    return this.conn.bufferedAmount();
  }

  get lagged(): boolean {
    return this.delivery.state === 'lagged';
  }

  /** Its socket is under the low mark: a replay may send it another slice (replay.ts). */
  get hasRoom(): boolean {
    return this.queued <= this.lag.lowBytes;
  }

  /** False once its socket has closed: nothing more is read for it. */
  get connected(): boolean {
    return this.delivery.state !== 'closed';
  }

  /** Its socket closed (the join may still be under way): what it waits for is let go of. */
  disconnected(): void {
    this.dispose();
    this.delivery = { state: 'closed' };
  }

  /**
   * A replay was given up on it (replay.ts): it was told PTY_OUTPUT_LAGGED before its Keyframe,
   * and its Output is dropped until its socket drains, as for a member that fell behind live.
   */
  fellBehind(): void {
    if (this.delivery.state === 'flowing') this.startLag();
  }

  /**
   * Output was dropped for it and no flush under way repaints it: at the session's end it is owed
   * the rest of the log, or the lag notice (flushes.ts, finishBehind).
   */
  get behind(): boolean {
    return this.droppedFrom !== null && this.flush.state === 'none';
  }

  /**
   * Every frame it missed is after its cursor: no other log frame (a Resize, a periodic Keyframe)
   * reached it since the first Output dropped, so the log from its cursor on is exactly the rest.
   */
  get missedOnlyTail(): boolean {
    return this.droppedFrom === null || this.droppedFrom > this.cursor;
  }

  /** Output reaches it again: what it is sent next is the rest of the log from its cursor. */
  resumeOutput(): void {
    this.dispose();
  }

  /** The latest log-frame sequence this connection has seen: what its unicast frames carry. */
  get lastSequence(): number {
    return this.cursor;
  }

  hold(): void {
    if (this.flush.state === 'none') this.flush = { state: 'holding', held: [], goodbye: null };
  }

  sendLog(frame: LogFrame): void {
    if (this.flush.state === 'holding') this.flush.held.push(frame);
    else this.deliver(frame);
  }

  /** A frame for this connection only, encoded here (wire.ts). */
  tell(frame: Unicast): void {
    this.conn.sendText(encodeUnicast(frame, this.clock.now()));
  }

  /**
   * Ends a flush (join or lag recovery): the frames given, the Keyframe, then what was held meanwhile.
   * `anchor` is the Keyframe's anchor_sequence: Output folded into it is not sent again.
   */
  release(frames: LogFrame[], keyframe: Unicast | null, anchor = 0): void {
    const flush = this.flush;
    this.batch(() => {
      for (const f of frames) this.deliver(f);
      if (keyframe) this.tell(keyframe);
      this.outputFloor = Math.max(this.outputFloor, anchor);
      this.flush = { state: 'none' };
      if (flush.state === 'holding') for (const f of flush.held) this.deliver(f);
    });
    if (flush.state === 'holding' && flush.goodbye) this.sayGoodbye(flush.goodbye);
  }

  /**
   * During a flush, the frames that come before its Keyframe (a join's replay), sent now: they go
   * out while the Keyframe is still being cut. Live frames stay held until release.
   */
  sendBeforeKeyframe(frames: LogFrame[]): void {
    this.batch(() => {
      for (const f of frames) this.deliver(f);
    });
  }

  /**
   * Waits until its socket has drained to the low mark: true then, false once the socket has
   * taken nothing for `stallMs` (a client that stopped reading). A replay paces itself with it
   * (replay.ts), so a client that reads gets all of it without the router queuing all of it.
   */
  async drained(stallMs: number): Promise<boolean> {
    let queued = this.queued;
    let still = 0;
    while (queued > this.lag.lowBytes) {
      await new Promise((resolve) => setTimeout(resolve, this.lag.pollMs));
      const now = this.queued;
      still = now < queued ? 0 : still + this.lag.pollMs;
      if (still >= stallMs) return false;
      queued = now;
    }
    return true;
  }

  /** Written out together: a replay's frames one by one would be a system call each (docs/performance.md). */
  private batch(write: () => void): void {
    if (this.conn.batch) this.conn.batch(write);
    else write();
  }

  /** binding_goodbye numbered `sequence`, then close 1000 (docs/protocol.md §4.5); during a flush, right after it. */
  goodbye(reason: string, sequence: number): void {
    const frame: Goodbye = { kind: 'Goodbye', reason, sequence };
    if (this.flush.state === 'holding') this.flush.goodbye = frame;
    else this.sayGoodbye(frame);
  }

  private sayGoodbye(frame: Goodbye): void {
    this.dispose();
    this.tell(frame);
    this.conn.close(CLOSE.goodbye, frame.reason);
  }

  /** Stops watching a lagged socket: Output flows again (unless the socket has closed). */
  dispose(): void {
    if (this.delivery.state !== 'lagged') return;
    clearInterval(this.delivery.poll);
    this.delivery = { state: 'flowing' };
  }

  private get droppedFrom(): number | null {
    return this.delivery.state === 'lagged' ? this.delivery.droppedFrom : null;
  }

  /** The connection's encoding is chosen here: PW1O for live Output on a binary connection, else the frame's JSON. */
  private deliver(frame: LogFrame): void {
    if (frame.sequence <= this.cursor) return;
    if (frame.data) {
      if (frame.sequence <= this.outputFloor) return;
      if (this.delivery.state === 'flowing' && this.conn.bufferedAmount() > this.lag.highBytes) this.startLag();
      if (this.delivery.state === 'lagged') {
        this.delivery.droppedFrom ??= frame.sequence;
        return;
      }
    }
    this.cursor = frame.sequence;
    const binary = this.conn.binary ? frame.binary : undefined;
    if (binary) this.conn.sendBinary(binary);
    else this.conn.sendText(frame.json);
  }

  private startLag(): void {
    const poll = setInterval(() => {
      if (this.conn.bufferedAmount() > this.lag.lowBytes) return;
      // Nothing dropped (a replay given up on, then no Output): its Keyframe has it all.
      const dropped = this.droppedFrom !== null;
      this.dispose();
      if (dropped) this.onCaughtUp(this);
    }, this.lag.pollMs);
    this.delivery = { state: 'lagged', poll, droppedFrom: null };
  }
}
