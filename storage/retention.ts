// What the database keeps beyond the replay floor (docs/operations.md, "Disk"): ended sessions and
// finished tasks for a set time, then nothing of them; each session's log within its byte budget,
// and all logs together within theirs. Every write goes through the store's single writer, a
// bounded batch at a time, so a sweep never holds it for long.
import { and, asc, count, desc, eq, gt, inArray, isNotNull, lt, ne, or, sql, sum } from 'drizzle-orm';
import type { LogRetention } from '../src/ports/store.ts';
import type { BuiltQuery, StoreDatabase } from './db.ts';
import { logLosses, sessionLog, sessions, shares, taskArtifacts, taskMessages, tasks } from './schema.ts';

type Write = (queries: BuiltQuery[]) => Promise<Array<{ rowsAffected: number }>>;

/** Sessions (or tasks) deleted per write: each is a short transaction. */
const BATCH = 50;

/** A2A task states after which a task changes no more (src/protocol/a2a.ts). */
const FINISHED = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

/** The bytes of a log row as `sessions.log_bytes` counts them (src/protocol/output-frame.ts, logEntryBytes). */
const rowBytes = sql<number>`length(${sessionLog.frame}) + coalesce(length(${sessionLog.output}), 0)`;

export class Retention implements LogRetention {
  constructor(
    private readonly db: StoreDatabase,
    private readonly write: Write,
  ) {}

  /** Bytes of every session's log, as counted by the commits and prunes. */
  async logBytes(instanceId: string): Promise<number> {
    const [row] = await this.db.select({ total: sum(sessions.logBytes) }).from(sessions).where(eq(sessions.instanceId, instanceId));
    return Number(row?.total ?? 0);
  }

  /**
   * Deletes the sessions of `instanceId` that ended before `before` (ISO-8601), with their log,
   * lost runs, tasks and share links. Resolves with how many went.
   */
  async deleteEnded(instanceId: string, before: string): Promise<number> {
    let deleted = 0;
    for (;;) {
      const ids = (
        await this.db
          .select({ id: sessions.id })
          .from(sessions)
          .where(and(eq(sessions.instanceId, instanceId), eq(sessions.state, 'closed'), lt(sessions.closedAt, before)))
          .limit(BATCH)
      ).map((r) => r.id);
      if (ids.length === 0) return deleted;
      const taskIds = this.db.select({ id: tasks.id }).from(tasks).where(inArray(tasks.contextId, ids));
      await this.write([
        this.db.delete(taskMessages).where(inArray(taskMessages.taskId, taskIds)),
        this.db.delete(taskArtifacts).where(inArray(taskArtifacts.taskId, taskIds)),
        this.db.delete(tasks).where(inArray(tasks.contextId, ids)),
        this.db.delete(shares).where(inArray(shares.sessionId, ids)),
        this.db.delete(logLosses).where(inArray(logLosses.sessionId, ids)),
        this.db.delete(sessionLog).where(inArray(sessionLog.sessionId, ids)),
        this.db.delete(sessions).where(inArray(sessions.id, ids)),
      ]);
      deleted += ids.length;
    }
  }

  /** Deletes finished tasks of `instanceId`'s sessions last updated before `before`, and share links revoked or expired before it. */
  async deleteFinished(instanceId: string, before: string): Promise<number> {
    const mine = this.db.select({ id: sessions.id }).from(sessions).where(eq(sessions.instanceId, instanceId));
    let deleted = 0;
    for (;;) {
      const ids = (
        await this.db
          .select({ id: tasks.id })
          .from(tasks)
          .where(and(inArray(tasks.contextId, mine), inArray(tasks.state, FINISHED), lt(tasks.updatedAt, before)))
          .limit(BATCH)
      ).map((r) => r.id);
      if (ids.length === 0) break;
      await this.write([
        this.db.delete(taskMessages).where(inArray(taskMessages.taskId, ids)),
        this.db.delete(taskArtifacts).where(inArray(taskArtifacts.taskId, ids)),
        this.db.delete(tasks).where(inArray(tasks.id, ids)),
      ]);
      deleted += ids.length;
    }
    await this.write([
      this.db
        .delete(shares)
        .where(and(eq(shares.instanceId, instanceId), or(and(isNotNull(shares.revokedAt), lt(shares.revokedAt, before)), lt(shares.expiresAt, before)))),
    ]);
    return deleted;
  }

  /**
   * Cuts every log of `instanceId` over `maxBytes` to its newest frames within it (the newest frame
   * always stays). Resolves with the bytes deleted.
   */
  async trimOver(instanceId: string, maxBytes: number): Promise<number> {
    const over = await this.db
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.instanceId, instanceId), gt(sessions.logBytes, maxBytes)));
    let deleted = 0;
    for (const { id } of over) deleted += await this.trim(id, maxBytes);
    return deleted;
  }

  /** Deletes the whole log of the ended sessions of `instanceId`, oldest ended first, until `bytes` are gone. Resolves with the bytes deleted. */
  async dropEndedLogs(instanceId: string, bytes: number): Promise<number> {
    const ended = await this.db
      .select({ id: sessions.id, bytes: sessions.logBytes })
      .from(sessions)
      .where(and(eq(sessions.instanceId, instanceId), eq(sessions.state, 'closed'), gt(sessions.logBytes, 0)))
      .orderBy(asc(sessions.closedAt));
    let deleted = 0;
    for (const { id, bytes: size } of ended) {
      if (deleted >= bytes) break;
      await this.write([this.db.delete(sessionLog).where(eq(sessionLog.sessionId, id)), this.db.update(sessions).set({ logBytes: 0 }).where(eq(sessions.id, id))]);
      deleted += size;
    }
    return deleted;
  }

  async liveWithLogs(instanceId: string): Promise<number> {
    const [row] = await this.db
      .select({ n: count() })
      .from(sessions)
      .where(and(eq(sessions.instanceId, instanceId), ne(sessions.state, 'closed'), gt(sessions.logBytes, 0)));
    return row?.n ?? 0;
  }

  /** Cuts one session's log to its newest frames within `maxBytes`; resolves with the bytes deleted. */
  private async trim(sessionId: string, maxBytes: number): Promise<number> {
    // The newest frame that no longer fits: it and everything older go.
    const tail = this.db
      .select({ sequence: sessionLog.sequence, tail: sql<number>`sum(${rowBytes}) over (order by ${sessionLog.sequence} desc)`.as('tail') })
      .from(sessionLog)
      .where(eq(sessionLog.sessionId, sessionId))
      .as('tail');
    const [cut] = await this.db.select({ sequence: tail.sequence }).from(tail).where(gt(tail.tail, maxBytes)).orderBy(desc(tail.sequence)).limit(1);
    const [newest] = await this.db.select({ sequence: sessionLog.sequence }).from(sessionLog).where(eq(sessionLog.sessionId, sessionId)).orderBy(desc(sessionLog.sequence)).limit(1);
    if (cut === undefined || newest === undefined) return 0;
    const upTo = Math.min(cut.sequence, newest.sequence - 1);
    const doomed = and(eq(sessionLog.sessionId, sessionId), sql`${sessionLog.sequence} <= ${upTo}`);
    const [bytes] = await this.db.select({ n: sum(rowBytes) }).from(sessionLog).where(doomed);
    await this.write([this.db.update(sessions).set({ logBytes: sql`max(0, ${sessions.logBytes} - (select coalesce(sum(${rowBytes}), 0) from ${sessionLog} where ${doomed}))` }).where(eq(sessions.id, sessionId)), this.db.delete(sessionLog).where(doomed)]);
    return Number(bytes?.n ?? 0);
  }
}
