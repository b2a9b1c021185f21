// Failed authentications per remote address (docs/security.md, attack 8): after a burst of HTTP 401s
// the address gets 429 for everything until the window has passed, so a guesser learns nothing
// more and cannot keep the JWT verifier busy. No timer: old failures are dropped when counted.
export interface AuthFailureLimits {
  burst: number;
  windowMs: number;
}

/** Addresses remembered at most; beyond, the longest-quiet ones are forgotten first. */
const MAX_ADDRESSES = 10_000;

export class AuthFailureThrottle {
  /** Failure times per address, oldest first, within the window; at most `burst` kept. */
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limits: AuthFailureLimits,
    private readonly now: () => number,
  ) {}

  /** Milliseconds until this address may try again; 0 when it is not throttled. */
  retryAfterMs(address: string): number {
    const times = this.recent(address);
    if (times.length < this.limits.burst) return 0;
    return Math.max(1, times[0]! + this.limits.windowMs - this.now());
  }

  failed(address: string): void {
    const times = this.recent(address);
    times.push(this.now());
    if (times.length > this.limits.burst) times.shift();
    // Re-inserted last: the Map's order is then least recently failed first.
    this.failures.delete(address);
    this.failures.set(address, times);
    for (const [a, t] of this.failures) {
      if (this.failures.size <= MAX_ADDRESSES && this.now() - t.at(-1)! < this.limits.windowMs) break;
      this.failures.delete(a);
    }
  }

  private recent(address: string): number[] {
    const times = this.failures.get(address) ?? [];
    while (times.length && this.now() - times[0]! >= this.limits.windowMs) times.shift();
    return times;
  }
}
