// One joined connection as the session sees it: its role, and the ordered delivery of its frames.
import type { ClientConnection } from '../ports.ts';
import type { Role } from '../protocol/pty-payloads.ts';
import type { LogFrame } from './live-session.ts';

interface Held {
  frame: LogFrame;
  binary: Uint8Array | undefined;
}

export class Member {
  role: Role = 'observer';
  /** Log frames produced while this member's initial flush is being read are held here, in order. */
  private held: Held[] | null = null;
  /** Highest log-frame sequence delivered: nothing at or below it is sent again. */
  private cursor = 0;
  private pendingGoodbye: string | null = null;

  constructor(
    private readonly conn: ClientConnection,
    readonly clientId: string,
    readonly label: string | undefined,
    readonly mayControl: boolean,
    private readonly goodbyeFrame: (reason: string) => string,
  ) {}

  get binary(): boolean {
    return this.conn.binary;
  }

  hold(): void {
    this.held = [];
  }

  sendLog(frame: LogFrame, binary?: Uint8Array): void {
    if (this.held) this.held.push({ frame, binary });
    else this.deliver(frame, binary);
  }

  sendUnicast(json: string): void {
    this.conn.sendText(json);
  }

  /** Ends the initial flush: replayed frames, the Keyframe, then what was held meanwhile. */
  release(replay: LogFrame[], keyframe: string | null): void {
    for (const f of replay) this.deliver(f, undefined);
    if (keyframe) this.conn.sendText(keyframe);
    const held = this.held ?? [];
    this.held = null;
    for (const h of held) this.deliver(h.frame, h.binary);
    if (this.pendingGoodbye) this.goodbye(this.pendingGoodbye);
  }

  /** binding_goodbye, then close 1000 (pty-ws-v1 §5.4); during the initial flush, right after it. */
  goodbye(reason: string): void {
    if (this.held) {
      this.pendingGoodbye = reason;
      return;
    }
    this.conn.sendText(this.goodbyeFrame(reason));
    this.conn.close(1000, reason);
  }

  private deliver(frame: LogFrame, binary: Uint8Array | undefined): void {
    if (frame.sequence <= this.cursor) return;
    this.cursor = frame.sequence;
    if (binary) this.conn.sendBinary(binary);
    else this.conn.sendText(frame.json);
  }
}
