// A start that fails because the database's disk is full says what to free, with the sizes it
// found (docs/operations.md, "Disk"), instead of the bare "the change was not stored".
import { storageFaultKind } from './open-error.ts';

/** The database file and its filesystem, as the runtime measured them. */
export interface DiskFacts {
  path: string;
  freeBytes: number;
  totalBytes: number;
  databaseBytes: number;
  walBytes: number;
}

/** What a start needs free beyond the database: its write-ahead log, the lease and the journal's recovery. */
export const START_HEADROOM_BYTES = 8 * 1024 * 1024;

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** `err` as a start error that says what to free when it is a full disk; else undefined. */
export function fullDiskAtStart(err: unknown, databaseUrl: string, facts: DiskFacts | undefined): Error | undefined {
  if (storageFaultKind(err) !== 'full') return undefined;
  const where = facts
    ? `${facts.path} is ${mib(facts.databaseBytes)} (its -wal ${mib(facts.walBytes)}) and its filesystem has ${facts.freeBytes} bytes free of ${mib(facts.totalBytes)}`
    : `the database ${databaseUrl.replace(/\?.*$/, '')} has no room left`;
  return new Error(
    `the disk holding the database is full: ${where}. Free at least ${mib(START_HEADROOM_BYTES)} on that filesystem (files other than pty-ws's, or move the ` +
      'database with its -wal to a larger disk and point PTY_WS_DATABASE_URL at it), then start again: the retention sweep then deletes what ' +
      'PTY_WS_ENDED_RETENTION_SECONDS and the log budgets allow (docs/operations.md, "Disk")',
    { cause: err },
  );
}
