// Frames one connection may send (docs/protocol.md §1.6: sustained abuse warrants RATE_LIMITED errors and
// connection close; docs/security.md, attack 8): a token bucket. Over it a frame is dropped unread;
// the first drop in each second is answered with RATE_LIMITED, and after `strikesToClose` such
// seconds in a row the connection is closed with 4429. No timer: time is read on each frame.
import { BindingError } from '../protocol/errors.ts';

export interface FrameRateLimits {
  perSecond: number;
  burst: number;
  strikesToClose: number;
}

/** `accept` the frame; `drop` it silently; `warn` (drop and say so); `close` the connection. */
export type FrameVerdict = 'accept' | 'drop' | 'warn' | 'close';

/** Two strikes further apart than this are not "in a row": the flood had stopped. */
const STRIKE_GAP_MS = 2000;

export class FrameRateLimiter {
  private tokens: number;
  private strikes = 0;
  private lastStrikeAt = -Infinity;

  constructor(
    private readonly limits: FrameRateLimits,
    private last: number,
  ) {
    this.tokens = limits.burst;
  }

  take(now: number): FrameVerdict {
    this.tokens = Math.min(this.limits.burst, this.tokens + ((now - this.last) * this.limits.perSecond) / 1000);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 'accept';
    }
    if (now - this.lastStrikeAt < 1000) return 'drop';
    this.strikes = now - this.lastStrikeAt > STRIKE_GAP_MS ? 1 : this.strikes + 1;
    this.lastStrikeAt = now;
    return this.strikes >= this.limits.strikesToClose ? 'close' : 'warn';
  }
}

/** What a connection is told for a verdict: nothing, an Error, or a fatal one (close 4429). */
export function rateLimitError(verdict: FrameVerdict, { perSecond, burst }: FrameRateLimits): BindingError | null {
  if (verdict === 'accept' || verdict === 'drop') return null;
  const message = `too many frames: at most ${perSecond} a second (bursts of ${burst}); frames over it are dropped`;
  return verdict === 'warn' ? new BindingError('RATE_LIMITED', message) : new BindingError('RATE_LIMITED', `${message}, and this connection kept on`, { fatal: true });
}
