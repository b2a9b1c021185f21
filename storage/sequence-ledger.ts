// Each session's numbering in the database (docs/protocol.md §3.4): the ceiling a router may number
// up to, raised ahead of use through the store's synced writer, and what crashes skipped.
import { and, eq, gt, inArray, sql } from 'drizzle-orm';
import type { LogEntry } from '../src/protocol/logged-frames.ts';
import type { SequenceState } from '../src/ports/store.ts';
import type { BuiltQuery, StoreDatabase } from './db.ts';
import type { JournalContents } from './log-journal.ts';
import { sessions } from './schema.ts';

type Write = (queries: BuiltQuery[]) => Promise<unknown>;

export class SequenceLedger {
  constructor(
    private readonly db: StoreDatabase,
    private readonly write: Write,
  ) {}

  /** `stored` from the database; the store folds in what is still queued. */
  async state(sessionId: string): Promise<SequenceState> {
    const [row] = await this.db
      .select({ stored: sessions.currentSequence, ceiling: sessions.sequenceCeiling, skipped: sessions.skippedSequences })
      .from(sessions)
      .where(eq(sessions.id, sessionId));
    return row ?? { stored: 0, ceiling: 0, skipped: 0 };
  }

  async reserve(sessionId: string, ceiling: number): Promise<void> {
    await this.write([
      this.db
        .update(sessions)
        .set({ sequenceCeiling: sql`max(${sessions.sequenceCeiling}, ${ceiling})` })
        .where(eq(sessions.id, sessionId)),
    ]);
  }

  /** `also`: written in the same transaction (the record of the run skipped). */
  async skip(sessionId: string, ceiling: number, skipped: number, also: BuiltQuery[] = []): Promise<void> {
    await this.write([
      ...also,
      this.db
        .update(sessions)
        .set({
          skippedSequences: sql`${sessions.skippedSequences} + ${skipped}`,
          currentSequence: sql`max(${sessions.currentSequence}, ${ceiling})`,
        })
        .where(eq(sessions.id, sessionId)),
    ]);
  }

  async release(last: ReadonlyMap<string, number>): Promise<void> {
    if (last.size === 0) return;
    await this.write([...last].map(([id, sequence]) => this.db.update(sessions).set({ sequenceCeiling: sequence }).where(eq(sessions.id, id))));
  }

  /**
   * What a journal found at start needs from the database: its frames the log lacks (never one
   * retention already removed: only above `current_sequence`), to be committed by the caller.
   */
  async missing(entries: readonly LogEntry[]): Promise<LogEntry[]> {
    const ids = [...new Set(entries.map((e) => e.sessionId))];
    if (ids.length === 0) return [];
    const rows = await this.db.select({ id: sessions.id, stored: sessions.currentSequence }).from(sessions).where(inArray(sessions.id, ids));
    const stored = new Map(rows.map((r) => [r.id, r.stored]));
    return entries.filter((e) => stored.has(e.sessionId) && e.sequence > stored.get(e.sessionId)!);
  }

  /**
   * A journal written in this boot by this instance holds every number its router handed out
   * (docs/protocol.md §3.4): the ceilings come down to what is stored, or to the dropped frames'
   * marks, so a router that was killed skips nothing it did not lose.
   */
  async trustJournal(instanceId: string, journal: JournalContents): Promise<void> {
    const queries: BuiltQuery[] = [
      this.db
        .update(sessions)
        .set({ sequenceCeiling: sessions.currentSequence })
        .where(and(eq(sessions.instanceId, instanceId), gt(sessions.sequenceCeiling, sessions.currentSequence))),
    ];
    for (const [id, mark] of journal.marks) {
      queries.push(
        this.db
          .update(sessions)
          .set({ sequenceCeiling: sql`max(${sessions.currentSequence}, ${mark})` })
          .where(and(eq(sessions.id, id), eq(sessions.instanceId, instanceId))),
      );
    }
    await this.write(queries);
  }
}
