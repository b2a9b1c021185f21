// One connection as the task runner sees it: which tasks it follows, and ordered delivery of their
// TaskStatusUpdate frames (held while a SubscribeToTask replay is being read, like a join's flush).
import type { LogFrame, LogSink } from '../hub/types.ts';

export class TaskConnection implements LogSink {
  /** Unfinished tasks this connection is subscribed to. */
  readonly tasks = new Set<string>();
  /** Highest log-frame sequence delivered through here. */
  private sent = 0;
  private held: LogFrame[] | null = null;

  constructor(
    readonly clientId: string,
    private readonly out: (frame: LogFrame) => void,
  ) {}

  get lastSent(): number {
    return this.sent;
  }

  sendLog(frame: LogFrame): void {
    if (this.held) this.held.push(frame);
    else this.deliver(frame);
  }

  hold(): void {
    this.held ??= [];
  }

  /** Ends a replay: the frames read, then what was held meanwhile, each once and in order. */
  release(frames: LogFrame[]): void {
    for (const f of frames) this.deliver(f);
    const held = this.held ?? [];
    this.held = null;
    for (const f of held) this.deliver(f);
  }

  private deliver(frame: LogFrame): void {
    if (frame.sequence <= this.sent) return;
    this.sent = frame.sequence;
    this.out(frame);
  }
}
