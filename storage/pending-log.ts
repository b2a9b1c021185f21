import type { LogEntry } from '../src/protocol/logged-frames.ts';

/**
 * Log entries appended but not yet committed, per session, in sequence order. Reads merge
 * them with the database so a frame is readable from the moment it is appended.
 */
export class PendingLog {
  readonly #bySession = new Map<string, LogEntry[]>();

  add(entry: LogEntry): void {
    const list = this.#bySession.get(entry.sessionId);
    if (list === undefined) this.#bySession.set(entry.sessionId, [entry]);
    else list.push(entry);
  }

  /** Forgets entries that left the write queue: a committed batch, or frames given up on. */
  remove(entries: readonly LogEntry[]): void {
    const bySession = new Map<string, Set<LogEntry>>();
    for (const entry of entries) {
      const set = bySession.get(entry.sessionId);
      if (set === undefined) bySession.set(entry.sessionId, new Set([entry]));
      else set.add(entry);
    }
    for (const [sessionId, gone] of bySession) {
      const list = this.#bySession.get(sessionId);
      if (list === undefined) continue;
      // A committed batch is the oldest of its sessions' entries: the common case is a prefix.
      let prefix = 0;
      while (prefix < list.length && gone.has(list[prefix]!)) prefix++;
      if (prefix === gone.size) list.splice(0, prefix);
      else this.#bySession.set(sessionId, list.filter((entry) => !gone.has(entry)));
      if (this.#bySession.get(sessionId)!.length === 0) this.#bySession.delete(sessionId);
    }
  }

  after(sessionId: string, afterSequence: number, limit = Infinity): LogEntry[] {
    const list = this.#bySession.get(sessionId);
    if (list === undefined) return [];
    const start = list.findIndex((entry) => entry.sequence > afterSequence);
    return start === -1 ? [] : list.slice(start, start + limit);
  }

  first(sessionId: string): LogEntry | undefined {
    return this.#bySession.get(sessionId)?.[0];
  }

  last(sessionId: string): LogEntry | undefined {
    return this.#bySession.get(sessionId)?.at(-1);
  }

  lastOfKind(sessionId: string, kind: string): LogEntry | undefined {
    return this.#bySession.get(sessionId)?.findLast((entry) => entry.kind === kind);
  }
}

/**
 * Merges committed rows with queued entries, both in sequence order, up to `limit`. An entry
 * committed while a read was in flight is in both lists; the queued copy is kept.
 */
export function mergeBySequence(committed: LogEntry[], queued: LogEntry[], limit = Infinity): LogEntry[] {
  const merged: LogEntry[] = [];
  let i = 0;
  let j = 0;
  while (merged.length < limit) {
    const a = committed[i];
    const b = queued[j];
    if (a !== undefined && (b === undefined || a.sequence < b.sequence)) {
      merged.push(a);
      i++;
    } else if (b !== undefined) {
      if (a?.sequence === b.sequence) i++;
      merged.push(b);
      j++;
    } else {
      break;
    }
  }
  return merged;
}
