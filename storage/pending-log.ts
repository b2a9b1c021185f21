import type { LogEntry } from '../src/ports.ts';

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

  /** Forgets a batch that left the write queue; it holds the oldest entries of each of its sessions. */
  remove(batch: readonly LogEntry[]): void {
    const counts = new Map<string, number>();
    for (const entry of batch) counts.set(entry.sessionId, (counts.get(entry.sessionId) ?? 0) + 1);
    for (const [sessionId, count] of counts) {
      const list = this.#bySession.get(sessionId);
      if (list === undefined) continue;
      list.splice(0, count);
      if (list.length === 0) this.#bySession.delete(sessionId);
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
