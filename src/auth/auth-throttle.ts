// Failed authentications per key (docs/security.md, attack 8): a remote address, or an address with
// one token's hash. After a burst of HTTP 401s the key is throttled until the window has passed
// (routes/edge.ts decides what that refuses). No timer: old failures are dropped when counted.
export interface AuthFailureLimits {
  burst: number;
  windowMs: number;
}

/** Keys remembered at most; beyond, the longest-quiet ones are forgotten first. */
const MAX_KEYS = 10_000;

export class AuthFailureThrottle {
  /** Failure times per key, oldest first, within the window; at most `burst` kept. */
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limits: AuthFailureLimits,
    private readonly now: () => number,
  ) {}

  /** Whether this key failed within the window at all. */
  hasFailures(key: string): boolean {
    return this.recent(key).length > 0;
  }

  /** Milliseconds until this key may try again; 0 when it is not throttled. */
  retryAfterMs(key: string): number {
    const times = this.recent(key);
    if (times.length < this.limits.burst) return 0;
    return Math.max(1, times[0]! + this.limits.windowMs - this.now());
  }

  failed(key: string): void {
    const times = this.recent(key);
    times.push(this.now());
    if (times.length > this.limits.burst) times.shift();
    // Re-inserted last: the Map's order is then least recently failed first.
    this.failures.delete(key);
    this.failures.set(key, times);
    for (const [a, t] of this.failures) {
      if (this.failures.size <= MAX_KEYS && this.now() - t.at(-1)! < this.limits.windowMs) break;
      this.failures.delete(a);
    }
  }

  private recent(key: string): number[] {
    const times = this.failures.get(key) ?? [];
    while (times.length && this.now() - times[0]! >= this.limits.windowMs) times.shift();
    return times;
  }
}
