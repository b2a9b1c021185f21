// When to cut a periodic Keyframe (docs/protocol.md §6.3): after `frames` Output frames, or `seconds` of
// output, since the last one, whichever comes first.

export class KeyframeCadence {
  private outputs = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly frames: number,
    private readonly seconds: number,
    private readonly cut: () => void,
  ) {}

  /** Counts one logged Output frame; cuts when the frame budget is spent. */
  onOutput(): void {
    this.outputs++;
    if (this.outputs >= this.frames) {
      this.fire();
      return;
    }
    this.timer ??= setTimeout(() => this.fire(), this.seconds * 1000);
  }

  /** A Keyframe was logged: both budgets start again. */
  reset(): void {
    this.outputs = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  stop(): void {
    this.reset();
  }

  private fire(): void {
    this.reset();
    this.cut();
  }
}
