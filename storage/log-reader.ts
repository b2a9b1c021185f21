// How the committed part of a session's log is read for a replay (docs/performance.md, "Replay of
// 1000 frames to its Keyframe"): one statement, rows by position in logValueColumns' order.
import type { Client } from '@libsql/client';
import { getTableName } from 'drizzle-orm';
import { logValueColumns } from './log-rows.ts';
import { sessionLog } from './schema.ts';

/** A row of `logValueColumns`, by position, as a driver hands it out. */
export type LogValues = ArrayLike<unknown>;

/** Reads committed log rows; a runtime may read its local file on a connection of its own. */
export interface LogReader {
  /** The session's rows with a sequence above `after`, in order; at most `limit` (negative: all). */
  range(sessionId: string, after: number, limit: number): Promise<LogValues[]>;
  /** Releases what the reader holds; called once, by the store's close. */
  close(): void;
}

/**
 * The range read's text, its arguments (session id, after, limit) in that order. Written out rather
 * than built per read: a replay reads ~1000 rows, and the query builder's and the client's work per
 * read and per row was most of the read (docs/performance.md).
 */
export const LOG_RANGE_SQL =
  `select ${Object.values(logValueColumns).map((c) => `"${c.name}"`).join(', ')} from "${getTableName(sessionLog)}"` +
  ` where "${sessionLog.sessionId.name}" = ? and "${sessionLog.sequence.name}" > ? order by "${sessionLog.sequence.name}" limit ?`;

/** The reader over the store's own client (any URL: a file, a libSQL server, Turso). */
export function clientLogReader(client: Client): LogReader {
  return {
    range: async (sessionId, after, limit) => (await client.execute({ sql: LOG_RANGE_SQL, args: [sessionId, after, limit] })).rows,
    // The client is the store's: it closes it.
    close: () => undefined,
  };
}
