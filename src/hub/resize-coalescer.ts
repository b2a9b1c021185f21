// pty.session_resize at most ~10 times a second per connection (docs/protocol.md §5.2): a window
// being dragged sends a size per pixel, and each applied size is a host round trip, a logged
// Resize frame and a broadcast to every member. Sizes that come early wait for their turn and the
// last one wins; the connection's other frames are not held up meanwhile.
import type { Clock } from '../ports/clock.ts';

/** The shortest time between two sizes one connection applies. */
export const RESIZE_INTERVAL_MS = 100;

export interface Size {
  cols: number;
  rows: number;
}

export class ResizeCoalescer {
  private lastAt = -Infinity;
  /** The latest size waiting for its turn; undefined when none waits. */
  private waiting: Size | undefined;
  /** The request that asked for it: a failure to apply it answers that one. */
  private waitingId = '';

  constructor(private readonly clock: Clock) {}

  /**
   * Applies `size` now (the returned promise), or keeps it as the one to apply at the next turn,
   * when `later` is handed it with the id of the request it answers (a size arriving meanwhile
   * replaces both).
   */
  offer(size: Size, requestId: string, apply: (size: Size) => Promise<void>, later: (size: Size, requestId: string) => void): Promise<void> | undefined {
    const wait = this.lastAt + RESIZE_INTERVAL_MS - this.clock.now();
    if (wait <= 0 && this.waiting === undefined) {
      this.lastAt = this.clock.now();
      return apply(size);
    }
    const scheduled = this.waiting !== undefined;
    this.waiting = size;
    this.waitingId = requestId;
    if (!scheduled) {
      setTimeout(() => {
        const next = this.waiting!;
        this.waiting = undefined;
        this.lastAt = this.clock.now();
        later(next, this.waitingId);
      }, Math.max(0, wait));
    }
    return undefined;
  }
}
