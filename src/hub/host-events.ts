// Which PTY host events this router has logged (docs/protocol.md §3.4): each is acknowledged once
// its frame is journaled, and a reconnect or a restart names the last one per session, so the
// host sends again exactly what was received and not logged. Durability only: the credit loop's
// credit goes separately (session-flow.ts).
import type { PtyHost } from '../ports/pty-host.ts';

export class HostEventLedger {
  /** Per host epoch, the last event of each session logged. */
  private readonly logged = new Map<string, Record<string, number>>();

  constructor(private readonly pty: PtyHost) {}

  /** What a restart found in the journal. */
  seed(journaled: ReadonlyMap<string, Record<string, number>>): void {
    for (const [epoch, after] of journaled) this.logged.set(epoch, { ...after });
  }

  /** The session's events up to `n` are logged, or were of no use (no such session here). */
  handled(sessionId: string, n: number): void {
    const epoch = this.pty.epoch;
    if (epoch !== null) {
      let after = this.logged.get(epoch);
      if (!after) this.logged.set(epoch, (after = {}));
      after[sessionId] = Math.max(n, after[sessionId] ?? 0);
    }
    this.pty.ack(sessionId, n);
  }

  /** Events flow from the connected host, less those of it already logged. */
  startEvents(): void {
    const epoch = this.pty.epoch;
    // Numbers of other hosts mean nothing to this one.
    for (const known of [...this.logged.keys()]) if (known !== epoch) this.logged.delete(known);
    const after = epoch === null ? undefined : this.logged.get(epoch);
    // The hub gives credit back for all output it takes (session-flow.ts): every session runs the credit loop.
    this.pty.startEvents(after && epoch !== null ? { epoch, after } : undefined, true);
  }
}
