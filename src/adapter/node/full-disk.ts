// What is on a full disk under a `file:` database, for the start's message (storage/full-disk.ts).
import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DiskFacts } from '../../../storage/full-disk.ts';

/** The database file's path from its URL, or undefined for a remote database. */
function filePath(url: string): string | undefined {
  if (!url.startsWith('file:')) return undefined;
  return decodeURIComponent(url.slice('file:'.length).replace(/^\/\/(?=\/)/, '').replace(/\?.*$/, ''));
}

export function nodeDiskFacts(databaseUrl: string): DiskFacts | undefined {
  const path = filePath(databaseUrl);
  if (path === undefined) return undefined;
  try {
    const fs = statfsSync(dirname(path));
    const size = (p: string) => statSync(p, { throwIfNoEntry: false })?.size ?? 0;
    return { path, freeBytes: fs.bavail * fs.bsize, totalBytes: fs.blocks * fs.bsize, databaseBytes: size(path), walBytes: size(`${path}-wal`) };
  } catch {
    return undefined;
  }
}
