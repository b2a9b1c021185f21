// A rate limit, not flow control: pty.request_keyframe at most once per second per connection
// (KEYFRAME_REQUEST_INTERVAL_MS, docs/protocol.md §5.2): a request
// that comes early waits its turn (without holding up the connection's other frames); one more
// while it waits is refused.
import { BindingError } from '../protocol/errors.ts';
import { KEYFRAME_REQUEST_INTERVAL_MS } from '../core/flow-budget.ts';
import type { Clock } from '../ports/clock.ts';

export class KeyframePacer {
  private lastAt = -Infinity;
  private waiting = false;

  constructor(private readonly clock: Clock) {}

  /** Sends now, or hands `send` to `later` at its turn. */
  request(send: () => Promise<void>, later: (send: () => Promise<void>) => void): Promise<void> | undefined {
    if (this.waiting) throw new BindingError('RATE_LIMITED', 'a Keyframe is already on its way: at most one per second per connection');
    const wait = Math.max(0, this.lastAt + KEYFRAME_REQUEST_INTERVAL_MS - this.clock.now());
    this.lastAt = this.clock.now() + wait;
    if (wait === 0) return send();
    this.waiting = true;
    setTimeout(() => {
      this.waiting = false;
      later(send);
    }, wait);
    return undefined;
  }
}
