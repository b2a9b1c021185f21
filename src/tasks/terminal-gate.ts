// When the server may type a command into a terminal humans share: never into a half-typed line,
// never while someone is typing or a full-screen program has the screen, and not right after a
// Ctrl-C it sent (the shell needs a moment to print its prompt again).

const INTERRUPT_KEYS = new Set([0x03, 0x1a, 0x1c]);
/** Enter, Ctrl-C and Ctrl-U leave the shell's line empty. */
const LINE_DONE_KEYS = new Set([0x0d, 0x0a, 0x03, 0x15]);

export class TerminalGate {
  private lineDirty = false;
  private lastHumanInput = -Infinity;
  private settleUntil = -Infinity;

  constructor(private readonly limits: { humanQuietMs: number; settleMs: number }) {}

  /** A controller typed `data`; true when it holds an interrupt key (Ctrl-C, Ctrl-Z, Ctrl-\). */
  humanTyped(data: Uint8Array, now: number): boolean {
    if (data.length === 0) return false;
    this.lastHumanInput = now;
    this.lineDirty = !LINE_DONE_KEYS.has(data[data.length - 1]!);
    return data.some((b) => INTERRUPT_KEYS.has(b));
  }

  /** The server sent Ctrl-C. */
  interrupted(now: number): void {
    this.settleUntil = now + this.limits.settleMs;
  }

  /** 0 when a command may be typed now; else ms to wait, or -1 to wait for the human to finish the line. */
  busyFor(now: number, fullScreen: boolean): number {
    if (this.lineDirty) return -1;
    if (fullScreen) return 250;
    return Math.max(0, this.lastHumanInput + this.limits.humanQuietMs - now, this.settleUntil - now);
  }
}
