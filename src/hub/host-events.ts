// Which PTY host events this router has logged (docs/protocol.md §3.4): each is acknowledged once
// its frame is journaled, and a reconnect or a restart names the last one per session, so the
// host sends again exactly what was received and not logged.
import type { PtyHost } from '../ports.ts';

/**
 * Output bytes a session may have unacknowledged at the host (docs/protocol.md §9.3): what another
 * session's next echo may find queued ahead of it on the host socket. Two of the host's largest
 * batches, so the host reads the next while this router handles one.
 */
export const OUTPUT_WINDOW_BYTES = 128 * 1024;

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
    // Every event is acknowledged once handled (handled() above), so the host may bound each session.
    this.pty.startEvents(after && epoch !== null ? { epoch, after } : undefined, OUTPUT_WINDOW_BYTES);
  }
}
