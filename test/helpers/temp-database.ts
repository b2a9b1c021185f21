// A libSQL file database in a temp directory per test, and the stores and clients opened on it,
// closed after the test (storage tests).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from '@libsql/client';
import { afterEach, beforeEach } from 'vitest';
import { openStore, type OpenStoreOptions } from '../../storage/open.ts';
import type { LibsqlStore } from '../../storage/store.ts';

export interface TempDatabase {
  /** This test's directory and its database's URL. */
  readonly dir: string;
  readonly url: string;
  /** A store on the database, closed after the test. */
  open(options?: Partial<OpenStoreOptions>): Promise<LibsqlStore>;
  /** A second, raw connection to the same file: what the store committed, not what it remembers. */
  rawClient(): Client;
  /** Closes `handle` after the test. */
  track<T extends LibsqlStore | Client>(handle: T): T;
  /** Forgets `handle`: the test closed it itself. */
  untrack(handle: LibsqlStore | Client): void;
}

/** Registers the hooks: call once, at the top of a test file or describe. */
export function tempDatabase(prefix: string): TempDatabase {
  let dir = '';
  const opened: Array<LibsqlStore | Client> = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    for (const handle of opened.splice(0)) await handle.close();
    await rm(dir, { recursive: true, force: true });
  });
  const db: TempDatabase = {
    get dir() {
      return dir;
    },
    get url() {
      return `file:${join(dir, 'test.db')}`;
    },
    open: async (options = {}) => db.track(await openStore({ url: db.url, ...options })),
    rawClient: () => db.track(createClient({ url: db.url })),
    track(handle) {
      opened.push(handle);
      return handle;
    },
    untrack(handle) {
      const i = opened.indexOf(handle);
      if (i >= 0) opened.splice(i, 1);
    },
  };
  return db;
}
