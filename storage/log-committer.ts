import type { Client, InValue } from '@libsql/client';

/**
 * One statement of a log commit: its text and positional arguments, plain data only, so that a
 * runtime can hand the commit to another thread.
 */
export interface LogStatement {
  sql: string;
  args: InValue[];
}

/**
 * Runs the replay log's group commits (the log rows and the `current_sequence` bumps; every
 * other write stays on the store's client). The store's WriteQueue calls `commit` once at a time,
 * after the previous one settled, and never between another write's start and end, so a
 * committer with its own connection never competes with the store's client for the write lock.
 */
export interface LogCommitter {
  /** Runs the statements in one write transaction; rejects with the database's error (its message and code). */
  commit(statements: LogStatement[]): Promise<void>;
  /** Releases what the committer holds; called once, after its last commit settled. */
  close(): Promise<void>;
}

/** What a committer needs to open its own connection to the store's database. */
export interface LogDatabase {
  url: string;
  /** The busy timeout the store's own connections use. */
  busyTimeoutMs: number;
}

/** The committer that runs each commit on the store's own client, in the caller's thread. */
export function inThreadLogCommitter(client: Client): LogCommitter {
  return {
    commit: async (statements) => {
      await client.batch(statements, 'write');
    },
    // The client is the store's: it closes it.
    close: async () => undefined,
  };
}
