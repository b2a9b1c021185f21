// Who may read the replay log, and who may answer on the PTY host's socket: checked against the
// files themselves at start and before every connect (docs/security.md, attack list items 3 and 4).
// Portable: the runtime adapter supplies the file-system calls (FileFacts).
import { ConfigError, type Config } from '../core/config.ts';
import type { Logger } from '../ports/logger.ts';

export interface PathFacts {
  uid: number;
  /** Permission bits (and the sticky bit), as `stat` reports them. */
  mode: number;
  kind: 'directory' | 'file' | 'socket' | 'other';
}

export interface FileFacts {
  /** This process's uid; undefined where the runtime has none (nothing can be checked there). */
  uid: number | undefined;
  /** The path's facts (following symlinks), or undefined when it does not exist. */
  stat(path: string): PathFacts | undefined;
  chmod(path: string, mode: number): void;
  /** Creates the directory and its missing parents with `mode`; an existing one is left as it is. */
  mkdir(path: string, mode: number): void;
  /** Creates an empty file with `mode` unless one exists. */
  touch(path: string, mode: number): void;
}

const STICKY = 0o1000;
const octal = (mode: number): string => `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;
const parentOf = (path: string): string => path.slice(0, Math.max(path.lastIndexOf('/'), 1));

/** The dev token's hash, in the state directory (src/auth/dev-token.ts). */
export const DEV_TOKEN_FILE = 'dev-token.json';

/** SQLite's companions of a database file: they hold the same rows (the WAL most of all). */
export const DATABASE_COMPANIONS = ['-wal', '-shm', '-journal'] as const;

export interface PrivateState {
  /** Absolute. */
  stateDir: string;
  /** The absolute path of a `file:` database, when the database is one. */
  databaseFile?: string;
}

/**
 * Makes the state directory 0700 and the database file and its WAL/SHM/journal 0600, creating
 * what is missing with those modes (SQLite gives the WAL and SHM the database file's mode).
 * Loosened modes on our own files are narrowed and logged; a file of another user, or a database
 * in a directory other users may write without the sticky bit, stops the start (ConfigError).
 */
export function securePrivateState({ stateDir, databaseFile }: PrivateState, fs: FileFacts, logger: Logger): void {
  if (fs.uid === undefined) return;
  const problems: string[] = [];
  const own = (path: string, mode: number, kind: PathFacts['kind']) => {
    const problem = makePrivate(path, mode, kind, fs, logger);
    if (problem) problems.push(problem);
  };
  fs.mkdir(stateDir, 0o700);
  own(stateDir, 0o700, 'directory');
  // Whoever may write the dev token's hash may put their own token's there (src/auth/dev-token.ts).
  own(`${stateDir}/${DEV_TOKEN_FILE}`, 0o600, 'file');
  if (databaseFile !== undefined) {
    const dir = parentOf(databaseFile);
    if (dir !== stateDir) {
      fs.mkdir(dir, 0o700);
      const facts = fs.stat(dir);
      // Anyone who may write the directory may swap the database or plant its WAL; with the
      // sticky bit (/tmp) they cannot touch our files, and files of theirs are refused below.
      if (facts && (facts.mode & 0o022) !== 0 && (facts.mode & STICKY) === 0) {
        problems.push(`${dir} (the database's directory) is writable by other users (mode ${octal(facts.mode)}): they could replace the database; use a directory only this user can write`);
      }
    }
    if (problems.length === 0) {
      try {
        fs.touch(databaseFile, 0o600);
      } catch {
        // An unwritable directory: opening the database says so, naming it (storage/open-error.ts).
      }
      own(databaseFile, 0o600, 'file');
      for (const suffix of DATABASE_COMPANIONS) if (fs.stat(databaseFile + suffix)) own(databaseFile + suffix, 0o600, 'file');
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/** Takes the bits outside `mode` off `path` (logged) when it is ours, or says why it cannot be used. */
function makePrivate(path: string, mode: number, kind: PathFacts['kind'], fs: FileFacts, logger: Logger): string | undefined {
  const facts = fs.stat(path);
  if (!facts) return undefined;
  if (facts.kind !== kind) return `${path} is not a ${kind}`;
  if (facts.uid !== fs.uid) return `${path} belongs to uid ${facts.uid}, not to this user (uid ${fs.uid}): refusing to keep sessions' output there`;
  if ((facts.mode & 0o777 & ~mode) === 0) return undefined;
  // Only bits are taken away: a read-only file stays read-only (and fails to open as such).
  const narrowed = facts.mode & mode;
  try {
    fs.chmod(path, narrowed);
  } catch (err) {
    return `${path} is mode ${octal(facts.mode)} and cannot be made ${octal(narrowed)} (${String(err)})`;
  }
  logger.log('warn', 'narrowed the permissions of a private file: other users could read it', { path, was: octal(facts.mode), now: octal(narrowed) });
  return undefined;
}

/**
 * Why the PTY host socket at `socketPath` (absolute) cannot be trusted, or undefined when it can
 * (or does not exist yet). Only a socket of this user, in a directory of this user that no one
 * else may write, was bound by a process of this user: a socket file's owner is whoever bound it,
 * and no one else can create or replace an entry in such a directory.
 */
export function hostSocketProblem(socketPath: string, fs: FileFacts): string | undefined {
  if (fs.uid === undefined) return undefined;
  const dir = parentOf(socketPath);
  const dirFacts = fs.stat(dir);
  if (!dirFacts) return undefined;
  const refuse = (why: string) => `refusing the PTY host socket ${socketPath}: ${why}`;
  if (dirFacts.uid !== fs.uid) return refuse(`its directory ${dir} belongs to uid ${dirFacts.uid}, not to this user (uid ${fs.uid})`);
  if ((dirFacts.mode & 0o022) !== 0) return refuse(`its directory ${dir} is writable by other users (mode ${octal(dirFacts.mode)}), so whoever listens there may not be ours; use a directory only this user can write`);
  const facts = fs.stat(socketPath);
  if (!facts) return undefined;
  if (facts.kind !== 'socket') return undefined; // connecting fails with the runtime's own error
  if (facts.uid !== fs.uid) return refuse(`it was bound by uid ${facts.uid}, not by this user (uid ${fs.uid})`);
  if ((facts.mode & 0o077) !== 0) return refuse(`it is mode ${octal(facts.mode)}: other users could connect to it (a PTY host makes it 0600)`);
  return undefined;
}

/**
 * The PTY host's side: the socket's directory must be this user's and not writable by others
 * (whoever can write it can replace our socket with theirs). Write bits for others on our own
 * directory are removed (logged); another user's directory, or a shared sticky one, stops the host.
 */
export function secureSocketDir(dir: string, fs: FileFacts, logger: Logger): void {
  if (fs.uid === undefined) return;
  fs.mkdir(dir, 0o700);
  const facts = fs.stat(dir);
  if (!facts || facts.kind !== 'directory') throw new ConfigError([`${dir} (the PTY host socket's directory) is not a directory`]);
  if (facts.uid !== fs.uid) throw new ConfigError([`${dir} (the PTY host socket's directory) belongs to uid ${facts.uid}, not to this user (uid ${fs.uid})`]);
  if ((facts.mode & 0o022) === 0) return;
  // A sticky directory others may write (/tmp) is shared by design: not ours to narrow.
  if ((facts.mode & STICKY) !== 0) throw new ConfigError([`${dir} (the PTY host socket's directory) is a shared directory (mode ${octal(facts.mode)}): another user could bind the socket path first; use a directory only this user can write`]);
  const mode = facts.mode & 0o755;
  fs.chmod(dir, mode);
  logger.log('warn', 'narrowed the permissions of the PTY host socket directory: other users could replace the socket', { path: dir, was: octal(facts.mode), now: octal(mode) });
}

/** The path of a `file:` database URL as written (relative paths are the runtime's to resolve), else undefined. */
export function databaseFilePath(url: string): string | undefined {
  if (!url.startsWith('file:')) return undefined;
  return url.slice('file:'.length).replace(/[?#].*$/, '').replace(/^\/\/(?=\/)/, '');
}

/** Secrets that may come from a file instead of the environment, which every process of this user can read (/proc/<pid>/environ). */
const SECRET_FILES = [
  { file: 'jwtSecretFile', value: 'jwtSecret', setting: 'PTY_WS_JWT_SECRET' },
  { file: 'databaseAuthTokenFile', value: 'databaseAuthToken', setting: 'PTY_WS_DATABASE_AUTH_TOKEN' },
] as const;

/**
 * The config with each `*_FILE` secret read in: the file must be this user's and readable by no
 * one else; one trailing newline is dropped. A secret given both ways, or an unsafe file, is a ConfigError.
 */
export function readSecretFiles(config: Config, fs: FileFacts, readText: (path: string) => string): Config {
  const out = { ...config };
  const problems: string[] = [];
  for (const { file, value, setting } of SECRET_FILES) {
    const path = config[file];
    if (path === undefined) continue;
    if (config[value] !== undefined) {
      problems.push(`set one of ${setting} and ${setting}_FILE, not both`);
      continue;
    }
    const facts = fs.stat(path);
    if (!facts || facts.kind !== 'file') problems.push(`${setting}_FILE ${path}: no such file`);
    else if (fs.uid !== undefined && facts.uid !== fs.uid && facts.uid !== 0) problems.push(`${setting}_FILE ${path}: belongs to uid ${facts.uid}, not to this user (uid ${fs.uid}) or root`);
    else if ((facts.mode & 0o077) !== 0) problems.push(`${setting}_FILE ${path}: mode ${octal(facts.mode)} lets other users read it; chmod 600 it`);
    else out[value] = readText(path).replace(/\r?\n$/, '');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out;
}
