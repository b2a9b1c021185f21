// One joined connection as the session sees it: its role, and the ordered delivery of its frames.
// A connection that stops reading is *lagged*: its Output is dropped (never the PTY's or another
// client's problem) until its socket drains, then it gets PTY_OUTPUT_LAGGED and a fresh Keyframe.
import type { ClientConnection, Logger } from '../ports.ts';
import type { Role } from '../protocol/pty-payloads.ts';
import type { JoinRights } from './join-spec.ts';
import type { LogFrame } from './types.ts';
import { CLOSE } from '../protocol/close-codes.ts';

export interface LagPolicy {
  /** Bytes queued on the socket beyond which Output is dropped for this connection. */
  highBytes: number;
  /** Bytes queued on the socket under which it has caught up. */
  lowBytes: number;
  /** How often a lagged connection's socket is checked. */
  pollMs: number;
}

export class Member {
  role: Role = 'observer';
  /** The connection's audit logger (principal, scopes, peer); role events are logged through it. */
  audit: Logger | undefined;
  /** Log frames produced while this member's initial flush is being read are held here, in order. */
  private held: LogFrame[] | null = null;
  /** Highest log-frame sequence delivered: nothing at or below it is sent again. */
  private cursor = 0;
  /** Output at or below this sequence is already in a Keyframe this member got. */
  private outputFloor = 0;
  private pendingGoodbye: string | null = null;
  private lagTimer: ReturnType<typeof setInterval> | null = null;
  /** Output was dropped while lagged: it catches up with PTY_OUTPUT_LAGGED and a Keyframe. */
  private dropped = false;
  /** The first Output frame dropped since it last caught up (0: none). */
  private droppedFrom = 0;
  private open = true;

  constructor(
    private readonly conn: ClientConnection,
    readonly clientId: string,
    readonly label: string | undefined,
    /** What its principal may do: fixed for the connection's life. */
    readonly rights: JoinRights,
    private readonly goodbyeFrame: (reason: string) => string,
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
    return this.lagTimer !== null;
  }

  /** Its socket is under the low mark: a replay may send it another slice (replay.ts). */
  get hasRoom(): boolean {
    return this.queued <= this.lag.lowBytes;
  }

  /** False once its socket has closed: nothing more is read for it. */
  get connected(): boolean {
    return this.open;
  }

  /** Its socket closed (the join may still be under way): what it waits for is let go of. */
  disconnected(): void {
    this.open = false;
    this.dispose();
  }

  /**
   * A replay was given up on it (replay.ts): it was told PTY_OUTPUT_LAGGED before its Keyframe,
   * and its Output is dropped until its socket drains, as for a member that fell behind live.
   */
  fellBehind(): void {
    if (!this.lagged && this.open) this.startLag();
  }

  /**
   * Output was dropped for it and no flush under way repaints it: at the session's end it is owed
   * the rest of the log, or the lag notice (flushes.ts, finishBehind).
   */
  get behind(): boolean {
    return this.dropped && this.held === null;
  }

  /**
   * Every frame it missed is after its cursor: no other log frame (a Resize, a periodic Keyframe)
   * reached it since the first Output dropped, so the log from its cursor on is exactly the rest.
   */
  get missedOnlyTail(): boolean {
    return !this.dropped || this.droppedFrom > this.cursor;
  }

  /** Output reaches it again: what it is sent next is the rest of the log from its cursor. */
  resumeOutput(): void {
    this.dispose();
    this.dropped = false;
    this.droppedFrom = 0;
  }

  /** The latest log-frame sequence this connection has seen: what its unicast frames carry. */
  get lastSequence(): number {
    return this.cursor;
  }

  hold(): void {
    this.held ??= [];
  }

  sendLog(frame: LogFrame): void {
    if (this.held) this.held.push(frame);
    else this.deliver(frame);
  }

  sendUnicast(json: string): void {
    this.conn.sendText(json);
  }

  /**
   * Ends a flush (join or lag recovery): the frames given, the Keyframe, then what was held meanwhile.
   * `anchor` is the Keyframe's anchor_sequence: Output folded into it is not sent again.
   */
  release(frames: LogFrame[], keyframe: string | null, anchor = 0): void {
    this.batch(() => {
      for (const f of frames) this.deliver(f);
      if (keyframe) this.conn.sendText(keyframe);
      this.outputFloor = Math.max(this.outputFloor, anchor);
      const held = this.held ?? [];
      this.held = null;
      for (const f of held) this.deliver(f);
    });
    if (this.pendingGoodbye) this.goodbye(this.pendingGoodbye);
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

  /** binding_goodbye, then close 1000 (docs/protocol.md §4.5); during a flush, right after it. */
  goodbye(reason: string): void {
    if (this.held) {
      this.pendingGoodbye = reason;
      return;
    }
    this.dispose();
    this.conn.sendText(this.goodbyeFrame(reason));
    this.conn.close(CLOSE.goodbye, reason);
  }

  dispose(): void {
    if (this.lagTimer) clearInterval(this.lagTimer);
    this.lagTimer = null;
  }

  /** The connection's encoding is chosen here: PW1O for live Output on a binary connection, else the frame's JSON. */
  private deliver(frame: LogFrame): void {
    if (frame.sequence <= this.cursor) return;
    if (frame.data) {
      if (frame.sequence <= this.outputFloor) return;
      if (!this.lagged && this.conn.bufferedAmount() > this.lag.highBytes) this.startLag();
      if (this.lagged) {
        if (!this.dropped) this.droppedFrom = frame.sequence;
        this.dropped = true;
        return;
      }
    }
    this.cursor = frame.sequence;
    const binary = this.conn.binary ? frame.binary : undefined;
    if (binary) this.conn.sendBinary(binary);
    else this.conn.sendText(frame.json);
  }

  private startLag(): void {
    this.lagTimer = setInterval(() => {
      if (this.conn.bufferedAmount() > this.lag.lowBytes) return;
      this.dispose();
      // Nothing dropped (a replay given up on, then no Output): its Keyframe has it all.
      if (!this.dropped) return;
      this.dropped = false;
      this.droppedFrom = 0;
      this.onCaughtUp(this);
    }, this.lag.pollMs);
  }
}
