// A lock on a file that every process on this kernel sees, whatever its namespaces: SQLite's
// exclusive lock, which is a POSIX record lock (fcntl) on the file's inode. An abstract Unix
// socket name is per network namespace, so two containers sharing a volume could both bind one;
// a record lock they share. The kernel drops it with its process, however that process ends.
// Runtime code shared by the Node and Deno adapters: libSQL's local driver (the `libsql` package,
// the same native module on both) takes it for us. Node has no fcntl, and Deno's file locks are
// flock(2) locks, which record locks do not see.
import Database from 'libsql';

export interface HeldFileLock {
  release(): void;
}

/** Takes the lock on `path` (created when missing); null when another process holds it. */
export function holdExclusiveFileLock(path: string): HeldFileLock | null {
  const db = new Database(path, { timeout: 0 });
  try {
    // Kept after the transaction too: the lock lasts as long as the connection.
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code === 'SQLITE_BUSY') return null;
    throw e;
  }
  return { release: () => db.close() };
}
