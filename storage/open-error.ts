// Turns what libSQL, SQLite or fetch threw while opening a database into one sentence an operator
// can act on: which database, and what is wrong with it.

/** A database that could not be opened at start; `message` names the URL and the problem. */
export class StoreOpenError extends Error {
  constructor(
    readonly url: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot use the database ${url}: ${problem}`, options);
    this.name = 'StoreOpenError';
  }
}

/**
 * The URL as it may be printed: a libSQL URL can carry its token in the query
 * (`?authToken=...`) or credentials before the host, so both are cut.
 */
export function printableUrl(url: string): string {
  return url.replace(/\?.*$/, '').replace(/^([a-z]+:\/\/)[^/@]*@/i, '$1');
}

/** `PRAGMA quick_check` found damage; the message is what it reported. */
export class DamagedDatabaseError extends Error {
  readonly code = 'DamagedDatabase';
  constructor(report: string) {
    super(report);
    this.name = 'DamagedDatabaseError';
  }
}

interface Facts {
  codes: Set<string>;
  messages: string[];
}

/** Codes and messages along the whole `cause` chain (drizzle wraps libSQL, which wraps fetch). */
function facts(err: unknown): Facts {
  const out: Facts = { codes: new Set(), messages: [] };
  const seen = new Set<unknown>();
  for (let e: unknown = err; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') out.codes.add(code);
    // drizzle's message repeats the whole failed query: its cause says what went wrong.
    if (typeof message === 'string' && message !== '' && !message.startsWith('Failed query:')) out.messages.push(message);
  }
  return out;
}

const has = (f: Facts, pattern: RegExp): boolean => [...f.codes, ...f.messages].some((s) => pattern.test(s));

/** The storage failures an operator can act on, told apart by codes and messages along the cause chain. */
export type StorageFaultKind = 'busy' | 'read-only' | 'full' | 'damaged' | 'unreachable' | 'refused' | 'dropped';

export function storageFaultKind(err: unknown): StorageFaultKind | undefined {
  const f = facts(err);
  if (has(f, /SQLITE_BUSY|database is locked/i)) return 'busy';
  if (has(f, /SQLITE_READONLY|readonly database|SQLITE_CANTOPEN|unable to open (connection to local )?database|SQLITE_PERM|EACCES|EROFS/i)) return 'read-only';
  if (has(f, /SQLITE_FULL|disk is full|ENOSPC/i)) return 'full';
  if (has(f, /SQLITE_CORRUPT|SQLITE_NOTADB|file is not a database|malformed|DamagedDatabase/i)) return 'damaged';
  if (has(f, /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ECONNRESET|fetch failed/i)) return 'unreachable';
  if (has(f, /\b401\b|\b403\b|Unauthorized|Forbidden|Authentication failed|JWT is invalid/i)) return 'refused';
  // Over ws:// a libSQL server answers a bad token by dropping the socket: no status to read.
  if (has(f, /WebSocket was closed/i)) return 'dropped';
  return undefined;
}

/** The underlying error's own words, for the log reader. */
export function faultDetail(err: unknown): string {
  return facts(err).messages.at(-1) ?? String(err);
}

/** What went wrong, in words, followed by the underlying error for the log reader. */
export function describeOpenFailure(err: unknown, busyTimeoutMs: number): string {
  const detail = faultDetail(err);
  const because = (why: string): string => `${why} (${detail})`;
  switch (storageFaultKind(err)) {
    case 'busy':
      return because(`it is locked by another process (waited ${busyTimeoutMs / 1000} s); stop the other user of this file or point PTY_WS_DATABASE_URL elsewhere`);
    case 'read-only':
      return because('it cannot be opened for writing: check that the file and its directory exist and are writable by this user');
    case 'full':
      return because('the disk is full');
    case 'damaged':
      return because('the file is damaged (not a database, or pages that do not check): restore it from a backup, or move it and its -wal aside to start with an empty one');
    case 'unreachable':
      return because('the server cannot be reached: check the host and port, and that the libSQL server is running');
    case 'refused':
      return because('the server refused the credentials: check PTY_WS_DATABASE_AUTH_TOKEN');
    case 'dropped':
      return because('the server closed the connection without a reason, as a libSQL server does for a token it refuses: check PTY_WS_DATABASE_AUTH_TOKEN');
    case undefined:
      return detail;
  }
}
