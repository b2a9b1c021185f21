import type { LogEntry } from '../src/protocol/logged-frames.ts';
import { OutputFrame, outputEntry } from '../src/protocol/output-frame.ts';

/**
 * What an entry costs beyond its bytes, counted against the budgets: its LogEntry with the frame
 * getter's closure, the OutputFrame, the id string, the Uint8Array and its ArrayBuffer. Measured on
 * Node 20 as heap per kept frame, whatever its size: about 1260 bytes (test/storage/recent-log-memory.test.ts
 * holds the budget to it).
 */
export const ENTRY_OVERHEAD = 1280;

export interface RecentLogLimits {
  /** Most bytes kept per session: its newest committed frames that fit. */
  perSession: number;
  /** Most bytes kept in all; the sessions that committed least recently give theirs up first. */
  total: number;
}

interface Kept {
  /** Let-go entries are undefined until the array is compacted: their memory goes at once. */
  entries: Array<LogEntry | undefined>;
  /** Index of the oldest kept entry in `entries` (the ones before it were let go). */
  start: number;
  bytes: number;
  /** Every committed frame of the session numbered above this is kept. */
  coveredAfter: number;
}

/**
 * The newest committed frames of each session, kept after their commit so that a reconnect's
 * replay reads memory instead of the database (docs/performance.md, "Replay of 1000 frames to
 * its Keyframe"). What is kept is exact: a range is served only if every committed frame in it is
 * here, else the caller reads the database. It relies on a session's frames being committed in
 * sequence order (the write queue commits its head first); one that is not lets go of the session's.
 */
export class RecentLog {
  readonly #limits: RecentLogLimits;
  /** In order of last commit: the first is the first to give up its frames. */
  readonly #bySession = new Map<string, Kept>();
  #bytes = 0;

  constructor(limits: RecentLogLimits) {
    this.#limits = limits;
  }

  /** Entries just committed, in commit order. */
  committed(entries: readonly LogEntry[]): void {
    for (const entry of entries) this.#add(entry);
    for (const [sessionId, kept] of this.#bySession) {
      if (this.#bytes <= this.#limits.total) break;
      this.#bytes -= kept.bytes;
      this.#bySession.delete(sessionId);
    }
  }

  /** The session's committed entries after `after` (at most `limit`), or undefined when some of them are not kept. */
  after(sessionId: string, after: number, limit = Infinity): LogEntry[] | undefined {
    const kept = this.#bySession.get(sessionId);
    if (kept === undefined || after < kept.coveredAfter) return undefined;
    const { entries } = kept;
    let i = entries.length;
    // A reconnect asks for the newest frames: search from the end.
    while (i > kept.start && entries[i - 1]!.sequence > after) i--;
    return entries.slice(i, i + limit).map((e) => fresh(e!));
  }

  /**
   * Retention deleted the session's frames that are both older than `createdBefore` and numbered
   * below the newest `keepFrames` (docs/protocol.md §6.5): the kept ones go too, and with them any
   * older one, so what stays is still every frame after a number.
   */
  pruned(sessionId: string, createdBefore: number, keepFrames: number): void {
    const kept = this.#bySession.get(sessionId);
    if (kept === undefined) return;
    const { entries } = kept;
    const byCount = keepFrames > 0 ? entries.length - keepFrames : entries.length;
    let last = -1;
    for (let i = kept.start; i < byCount; i++) if (entries[i]!.createdAt < createdBefore) last = i;
    if (last >= 0) this.#letGo(kept, last + 1);
  }

  #add(entry: LogEntry): void {
    let kept = this.#bySession.get(entry.sessionId);
    if (kept !== undefined && entry.sequence <= (kept.entries.at(-1)?.sequence ?? kept.coveredAfter)) {
      // Out of order: the run would have a hole. Keep nothing, yet still cover after the newest.
      if (kept.start < kept.entries.length) this.#letGo(kept, kept.entries.length);
      return;
    }
    if (kept === undefined) kept = { entries: [], start: 0, bytes: 0, coveredAfter: entry.sequence - 1 };
    // Re-inserted: the map's order is the order of last commit.
    else this.#bySession.delete(entry.sessionId);
    this.#bySession.set(entry.sessionId, kept);
    const own = fresh(entry);
    const cost = costOf(own);
    kept.entries.push(own);
    kept.bytes += cost;
    this.#bytes += cost;
    let drop = kept.start;
    let bytes = kept.bytes;
    while (bytes > this.#limits.perSession && drop < kept.entries.length) bytes -= costOf(kept.entries[drop++]!);
    if (drop > kept.start) this.#letGo(kept, drop);
  }

  /** Lets go of the kept entries before index `end`. */
  #letGo(kept: Kept, end: number): void {
    kept.coveredAfter = kept.entries[end - 1]!.sequence;
    for (let i = kept.start; i < end; i++) {
      const cost = costOf(kept.entries[i]!);
      kept.bytes -= cost;
      this.#bytes -= cost;
      kept.entries[i] = undefined;
    }
    kept.start = end;
    // Compacted once half is let go: each entry is moved at most a few times.
    if (kept.start * 2 >= kept.entries.length) {
      kept.entries = kept.entries.slice(kept.start);
      kept.start = 0;
    }
  }
}

/**
 * What keeping an entry costs: an Output frame's bytes are a view, charged the whole buffer it
 * keeps alive. A live frame's buffer is its own, with room for the PW1O head and at most a
 * quarter more (src/hub/gathered-output.ts); a frame read back from the database or the journal
 * may be a view into a larger read.
 */
function costOf(entry: LogEntry): number {
  return (entry.output ? entry.output.data.buffer.byteLength : entry.frame.length) + ENTRY_OVERHEAD;
}

/**
 * An entry as kept, and as each reader gets it: an Output frame is a new one, without the JSON or
 * PW1O text its live use (or another reader) built, so what a replay builds is not kept.
 */
function fresh(entry: LogEntry): LogEntry {
  const out = entry.output;
  return out ? outputEntry(entry.sessionId, new OutputFrame(out.id, entry.sequence, entry.createdAt, out.data)) : entry;
}
