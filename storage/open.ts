import { createClient } from '@libsql/client';
import { drizzle } from 'drizzle-orm/libsql';
import { migrateDatabase } from './migrate.ts';
import { LibsqlStore, type LibsqlStoreOptions } from './store.ts';

export interface OpenStoreOptions extends LibsqlStoreOptions {
  /**
   * libSQL URL: `file:`, `libsql://`, `http(s)://`, `ws(s)://`. For `file:` the parent
   * directory must already exist: storage/ cannot touch the filesystem itself (portable
   * core), so the runtime adapter creates it.
   */
  url: string;
  authToken?: string;
}

/** How long a local statement waits for another process's lock before failing busy. */
const BUSY_TIMEOUT_MS = 5000;

/** Opens the database, brings its schema up to date and returns the store over it. */
export async function openStore({ url, authToken, ...storeOptions }: OpenStoreOptions): Promise<LibsqlStore> {
  // `timeout` is the busy timeout of every pooled connection; a `PRAGMA busy_timeout` would
  // only reach the one connection that happened to run it.
  const client = createClient({ url, authToken, timeout: BUSY_TIMEOUT_MS });
  try {
    // WAL lets readers (replays) run while the log writer commits; the mode is stored in the file.
    if (url.startsWith('file:')) await client.execute('PRAGMA journal_mode=WAL');
    const db = drizzle(client);
    await migrateDatabase(db);
    return new LibsqlStore(db, storeOptions);
  } catch (err) {
    client.close();
    throw err;
  }
}
