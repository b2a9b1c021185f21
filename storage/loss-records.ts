// The runs of a session's log the database will never have (docs/protocol.md §3.4), recorded in
// `log_losses` so a replay that crosses one says so, also after a restart. A loss is known when
// the database is failing, so its record waits in memory (and is read from there) until a write
// succeeds: it is tried again after each log commit that gets through.
import { and, asc, eq, gt, lte, sql } from 'drizzle-orm';
import type { Logger } from '../src/ports/logger.ts';
import type { LogLoss, LostRange } from '../src/ports/store.ts';
import type { BuiltQuery, StoreDatabase } from './db.ts';
import { logLosses, sessions } from './schema.ts';

type Write = (queries: BuiltQuery[]) => Promise<unknown>;

export class LossRecords {
  /** Losses not stored yet, oldest first. */
  #pending: LogLoss[] = [];
  #writing: Promise<void> | null = null;

  constructor(
    private readonly db: StoreDatabase,
    private readonly write: Write,
    private readonly now: () => number,
    private readonly logger?: Logger,
  ) {}

  /** Records the losses (and counts their frames in the sessions' `skipped_sequences`). */
  add(losses: readonly LogLoss[]): void {
    this.#pending.push(...losses);
    void this.store();
  }

  /** The statement recording the run alone (the crash-skip path counts its numbers itself). */
  record(loss: Omit<LogLoss, 'frames'>): BuiltQuery {
    return this.db
      .insert(logLosses)
      .values({ sessionId: loss.sessionId, firstSequence: loss.first, lastSequence: loss.last, reason: loss.reason, createdAt: this.now() })
      .onConflictDoNothing();
  }

  /** The run, and its frames counted in the session's `skipped_sequences`. */
  private queries(loss: LogLoss): BuiltQuery[] {
    return [
      this.record(loss),
      this.db
        .update(sessions)
        .set({ skippedSequences: sql`${sessions.skippedSequences} + ${loss.frames}` })
        .where(eq(sessions.id, loss.sessionId)),
    ];
  }

  /** Tries to store what waits; resolves either way (a failure is logged, and the losses wait for the next try). */
  store(): Promise<void> {
    if (this.#writing || this.#pending.length === 0) return this.#writing ?? Promise.resolve();
    const batch = this.#pending.slice();
    this.#writing = this.write(batch.flatMap((loss) => this.queries(loss)))
      .then(
        () => {
          this.#pending = this.#pending.filter((loss) => !batch.includes(loss));
        },
        (err: unknown) => {
          this.logger?.log('warn', 'storage: lost log frames could not be recorded yet; tried again after the next commit', { runs: batch.length, error: err });
        },
      )
      .finally(() => {
        this.#writing = null;
      });
    return this.#writing;
  }

  /** The runs of the session that end after `after` and start at or before `upTo`, in order. */
  async ranges(sessionId: string, after: number, upTo: number): Promise<LostRange[]> {
    const rows = await this.db
      .select({ first: logLosses.firstSequence, last: logLosses.lastSequence, reason: logLosses.reason })
      .from(logLosses)
      .where(and(eq(logLosses.sessionId, sessionId), gt(logLosses.lastSequence, after), lte(logLosses.firstSequence, upTo)))
      .orderBy(asc(logLosses.firstSequence));
    const waiting = this.#pending.filter((l) => l.sessionId === sessionId && l.last > after && l.first <= upTo);
    const all = [...rows, ...waiting.map(({ first, last, reason }) => ({ first, last, reason }))];
    all.sort((a, b) => a.first - b.first);
    return all.filter((r, i) => i === 0 || r.first !== all[i - 1]!.first);
  }
}
