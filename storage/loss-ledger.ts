import type { LogEntry } from '../src/protocol/logged-frames.ts';
import type { LogLoss } from '../src/ports/store.ts';

/**
 * Log frames given up on and not yet reported, as runs of consecutive sequences per session and
 * reason: however many frames a long outage drops, what waits here stays a handful of runs.
 */
export class LossLedger {
  #runs: LogLoss[] = [];

  add(entries: readonly LogEntry[], reason: LogLoss['reason']): void {
    for (const { sessionId, sequence } of entries) {
      const run = this.#runs.findLast((r) => r.sessionId === sessionId && r.reason === reason);
      if (run !== undefined && run.last + 1 === sequence) {
        run.last = sequence;
        run.frames++;
      } else {
        this.#runs.push({ sessionId, first: sequence, last: sequence, frames: 1, reason });
      }
    }
  }

  take(): LogLoss[] {
    const runs = this.#runs;
    this.#runs = [];
    return runs;
  }
}
