// Interactive sessions first (docs/protocol.md §9.3). A session printing as fast as it can (a
// `cat` of a big file, a flood of logs) keeps the router, its emulator, its log writer and the
// machine's cores busy; while someone types into another session on this host, that keystroke's
// echo would queue behind the flood at every step. So while any other session has had input in
// the last INTERACTIVE_MS, a session streaming faster than BULK_BYTES_PER_S reads half the time:
// after each BULK_BYTES it rests as long as it has just read (at most MAX_REST_MS). A session that
// prints less than that, and every session while nobody types elsewhere, is never paced.

// A rate limit for fairness, not flow control: the credit loop (credit-loop.ts) bounds what a
// session has in flight; this bounds how much of the machine a flood takes. Figures: BULK_PACING
// in src/core/flow-budget.ts.
import { BULK_PACING } from '../src/core/flow-budget.ts';

const { INTERACTIVE_MS, BULK_BYTES, BULK_BYTES_PER_S, STREAK_GAP_MS, MAX_REST_MS } = BULK_PACING;

interface Streak {
  /** When this stretch of reading began (after the last rest, or the first output of the streak). */
  since: number;
  bytes: number;
  last: number;
}

export class BulkPacing {
  readonly #lastInput = new Map<string, number>();
  readonly #streaks = new Map<string, Streak>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Someone typed into the session. */
  input(sessionId: string): void {
    this.#lastInput.set(sessionId, this.#now());
  }

  /** The session's PTY gave `bytes` of output: how many ms it rests now (0: it reads on). */
  output(sessionId: string, bytes: number): number {
    const now = this.#now();
    if (!this.#othersInteractive(sessionId, now)) {
      this.#streaks.delete(sessionId);
      return 0;
    }
    let s = this.#streaks.get(sessionId);
    if (!s || now - s.last > STREAK_GAP_MS) this.#streaks.set(sessionId, (s = { since: now, bytes: 0, last: now }));
    s.bytes += bytes;
    s.last = now;
    if (s.bytes < BULK_BYTES) return 0;
    const reading = now - s.since;
    const bulk = s.bytes * 1000 >= BULK_BYTES_PER_S * Math.max(reading, 1);
    const rest = bulk ? Math.min(Math.max(reading, 1), MAX_REST_MS) : 0;
    // Reading starts again once the rest is over.
    s.since = s.last = now + rest;
    s.bytes = 0;
    return rest;
  }

  /** The session ended. */
  forget(sessionId: string): void {
    this.#lastInput.delete(sessionId);
    this.#streaks.delete(sessionId);
  }

  #othersInteractive(sessionId: string, now: number): boolean {
    let found = false;
    for (const [id, at] of this.#lastInput) {
      if (now - at > INTERACTIVE_MS) this.#lastInput.delete(id);
      else if (id !== sessionId) found = true;
    }
    return found;
  }
}
