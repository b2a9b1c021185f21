// Each session's share of the log writer's queue: the store reports bytes queued and settled for all
// sessions at once (`Store.watchQueue`), and the write queue settles frames oldest first, so bytes
// settled are attributed to the sessions in the order they were appended. Where the queue drops or
// gives up on frames out of that order the attribution drifts a little; it is set right each time
// the queue empties. Used by the per-session flow gate (session-flow.ts).
import type { Store } from '../ports/store.ts';

/** How one session's share moves. */
export interface Backlog {
  add(bytes: number): void;
  done(bytes: number): void;
}

export class LogLedger {
  /** Appended runs, oldest first, from `head` on (consecutive frames of one session merged). */
  private readonly runs: Array<{ sessionId: string; bytes: number }> = [];
  private head = 0;
  private total = 0;
  private readonly pending = new Map<string, number>();
  private readonly backlogs = new Map<string, Backlog>();
  /** The session whose frame the store is queueing right now (see `appending`). */
  private appender: string | null = null;

  /** The store's queue reports, for Store.watchQueue. */
  readonly listener = {
    queued: (bytes: number) => {
      if (this.appender !== null) this.queued(this.appender, bytes);
    },
    settled: (bytes: number) => this.settled(bytes),
  };

  /** This session's queued bytes go to `backlog` from now on. */
  track(sessionId: string, backlog: Backlog): void {
    this.backlogs.set(sessionId, backlog);
  }

  forget(sessionId: string): void {
    this.backlogs.delete(sessionId);
  }

  /**
   * The store, with each appendLog marked with its session: the queue reports it synchronously,
   * so a frame the store refuses (closed) is not counted.
   */
  appending(store: Store): Store {
    return new Proxy(store, {
      get: (target, prop) => {
        if (prop === 'appendLog') {
          return (entry: Parameters<Store['appendLog']>[0]) => {
            this.appender = entry.sessionId;
            try {
              target.appendLog(entry);
            } finally {
              this.appender = null;
            }
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  private queued(sessionId: string, bytes: number): void {
    const last = this.runs.at(-1);
    if (last && this.runs.length > this.head && last.sessionId === sessionId) last.bytes += bytes;
    else this.runs.push({ sessionId, bytes });
    this.total += bytes;
    this.pending.set(sessionId, (this.pending.get(sessionId) ?? 0) + bytes);
    this.backlogs.get(sessionId)?.add(bytes);
  }

  private settled(bytes: number): void {
    this.total -= bytes;
    if (this.total <= 0) {
      this.reset();
      return;
    }
    let left = bytes;
    while (left > 0 && this.head < this.runs.length) {
      const run = this.runs[this.head]!;
      const taken = Math.min(run.bytes, left);
      run.bytes -= taken;
      left -= taken;
      this.release(run.sessionId, taken);
      if (run.bytes === 0) this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.runs.length) {
      this.runs.splice(0, this.head);
      this.head = 0;
    }
  }

  /** The queue is empty: whatever is still attributed was settled out of order. */
  private reset(): void {
    for (const [sessionId, bytes] of [...this.pending]) this.release(sessionId, bytes);
    this.runs.length = 0;
    this.head = 0;
    this.total = 0;
  }

  private release(sessionId: string, bytes: number): void {
    const left = (this.pending.get(sessionId) ?? 0) - bytes;
    if (left > 0) this.pending.set(sessionId, left);
    else this.pending.delete(sessionId);
    this.backlogs.get(sessionId)?.done(bytes);
  }
}
