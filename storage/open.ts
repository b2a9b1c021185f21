import { createClient } from '@libsql/client';
import { drizzle } from 'drizzle-orm/libsql';
import type { LogCommitter, LogDatabase } from './log-committer.ts';
import type { LogReader } from './log-reader.ts';
import { migrateDatabase } from './migrate.ts';
import { DamagedDatabaseError, describeOpenFailure, printableUrl, StoreOpenError } from './open-error.ts';
import { LibsqlStore, type LibsqlStoreOptions } from './store.ts';

export interface OpenStoreOptions extends Omit<LibsqlStoreOptions, 'logCommitter' | 'logReader'> {
  /**
   * libSQL URL: `file:`, `libsql://`, `http(s)://`, `ws(s)://`. For `file:` the parent
   * directory must already exist: storage/ cannot touch the filesystem itself (portable
   * core), so the runtime adapter creates it.
   */
  url: string;
  authToken?: string;
  /**
   * Makes the runtime's committer of the log's group commits, once the database is open,
   * migrated and known to take writes; undefined (or no factory): the store's client commits them.
   */
  logCommitterFor?: (db: LogDatabase) => LogCommitter | undefined;
  /** Makes the runtime's reader of the committed log, once the database is open; undefined (or no factory): the store's client reads it. */
  logReaderFor?: (db: LogDatabase) => LogReader | undefined;
}

/** How long a local statement waits for another process's lock before failing busy. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens the database, brings its schema up to date, makes sure it takes writes and returns the
 * store over it. Rejects with a StoreOpenError naming the URL and what is wrong (locked,
 * read-only, unreachable, refused credentials) rather than letting the first log commit find out.
 */
export async function openStore({ url, authToken, logCommitterFor, logReaderFor, ...storeOptions }: OpenStoreOptions): Promise<LibsqlStore> {
  let client;
  try {
    // `timeout` is the busy timeout of every pooled connection of a file database (a
    // `PRAGMA busy_timeout` would only reach the one connection that ran it); remote servers
    // handle their own locking.
    client = createClient({ url, authToken, timeout: BUSY_TIMEOUT_MS });
  } catch (err) {
    throw new StoreOpenError(printableUrl(url), describeOpenFailure(err, BUSY_TIMEOUT_MS), { cause: err });
  }
  try {
    // WAL lets readers (replays) run while the log writer commits; the mode is stored in the
    // file. It is a file-only notion: a libSQL server picks its own journal.
    if (url.startsWith('file:')) {
      await client.execute('PRAGMA journal_mode=WAL');
      // A damaged page otherwise surfaces later as a raw failed query, or never (a page no start
      // query reads); quick_check reads every page once (0.3 s for 100 MB, measured on a loaded 2-core VM).
      const damage = (await client.execute('PRAGMA quick_check(5)')).rows.map((r) => String(r[0])).filter((line) => line !== 'ok');
      if (damage.length > 0) throw new DamagedDatabaseError(damage.join('; '));
    }
    const db = drizzle(client);
    await migrateDatabase(db);
    // A database already migrated needs no write to get here: take the write lock once, so a
    // database that is locked or read-only fails now, with a clear message, and not at the
    // first log commit. Nothing matches the update, so nothing changes.
    await client.batch(["update sessions set id = id where 0"], 'write');
    const where = { url, busyTimeoutMs: BUSY_TIMEOUT_MS };
    return new LibsqlStore(db, { ...storeOptions, logCommitter: logCommitterFor?.(where), logReader: logReaderFor?.(where) });
  } catch (err) {
    client.close();
    throw new StoreOpenError(printableUrl(url), describeOpenFailure(err, BUSY_TIMEOUT_MS), { cause: err });
  }
}
