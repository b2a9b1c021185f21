// Replays read a local database file on a connection of their own (docs/performance.md, "Replay of
// 1000 frames to its Keyframe"): a prepared statement kept for the router's life, rows as arrays,
// integers as numbers. Through the store's client the same 1000 rows take 2-3× as long: it
// prepares the statement on every read, turns every integer into a BigInt and back, and copies
// every row into an object. libSQL's local driver is synchronous either way.
import { expandConfig } from '@libsql/core/config';
import Database from 'libsql';
import type { LogDatabase } from '../../../storage/log-committer.ts';
import { LOG_RANGE_SQL, type LogReader, type LogValues } from '../../../storage/log-reader.ts';

/** A reader of a `file:` database's log, or undefined for a libSQL server or an in-memory database (not shared between connections). */
export function fileLogReaderFor({ url, busyTimeoutMs }: LogDatabase): LogReader | undefined {
  // The path as the store's client finds it (relative paths, `file:///abs`, query parameters).
  const config = expandConfig({ url }, false);
  if (config.scheme !== 'file' || config.path.startsWith(':memory:')) return undefined;
  let db: Database.Database | undefined;
  let statement: Database.Statement<unknown[]> | undefined;
  const prepared = (): Database.Statement<unknown[]> => {
    db ??= new Database(config.path, { timeout: busyTimeoutMs });
    statement ??= db.prepare(LOG_RANGE_SQL).raw(true);
    return statement;
  };
  return {
    // Opened at the first read: a router that never replays opens nothing.
    range: async (sessionId, after, limit) => prepared().all(sessionId, after, limit) as LogValues[],
    close: () => db?.close(),
  };
}
