// SQLite reads a write-ahead log only up to its first damaged frame and silently drops every
// commit after it (a damaged header drops them all): a corrupted -wal file would start the router
// on an older, or empty, database and then overwrite the log. This reads the WAL as SQLite's file
// format defines it (sqlite.org/fileformat2.html, "WAL File Format") before the database is opened.

import { printableUrl, StoreOpenError } from './open-error.ts';

const HEADER = 32;
const FRAME_HEADER = 24;

/** The two cumulative 32-bit checksums of `bytes` (a multiple of 8 long), continuing from `s`. */
function checksum(bytes: Uint8Array, littleEndian: boolean, s: [number, number]): [number, number] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let [s0, s1] = s;
  for (let i = 0; i < bytes.byteLength; i += 8) {
    s0 = (s0 + view.getUint32(i, littleEndian) + s1) >>> 0;
    s1 = (s1 + view.getUint32(i + 4, littleEndian) + s0) >>> 0;
  }
  return [s0, s1];
}

/**
 * Why this WAL file would lose committed transactions, or undefined when SQLite reads all of it.
 * A damaged frame followed only by frames of no later commit is a torn last write (the crash
 * SQLite's checksums are there for) and passes; frames of an older generation (other salts)
 * are leftovers of a reset WAL and pass too.
 */
export function walProblem(wal: Uint8Array): string | undefined {
  if (wal.byteLength === 0) return undefined;
  if (wal.byteLength < HEADER) return `it is ${wal.byteLength} bytes long, shorter than a WAL header`;
  const view = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  const magic = view.getUint32(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return 'its header is not a SQLite WAL header';
  const littleEndian = magic === 0x377f0682;
  const pageSize = view.getUint32(8);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return `its header names an impossible page size (${pageSize})`;
  let sum = checksum(wal.subarray(0, 24), littleEndian, [0, 0]);
  if (sum[0] !== view.getUint32(24) || sum[1] !== view.getUint32(28)) return 'its header checksum does not match';
  const salt1 = view.getUint32(16);
  const salt2 = view.getUint32(20);
  let damagedAt: number | undefined;
  for (let off = HEADER, frame = 1; off + FRAME_HEADER + pageSize <= wal.byteLength; off += FRAME_HEADER + pageSize, frame++) {
    if (view.getUint32(off + 8) !== salt1 || view.getUint32(off + 12) !== salt2) break;
    const commit = view.getUint32(off + 4) !== 0;
    if (damagedAt !== undefined) {
      if (commit) return `frame ${damagedAt} is damaged, and SQLite would drop every transaction committed after it (up to frame ${frame})`;
      continue;
    }
    sum = checksum(wal.subarray(off + FRAME_HEADER, off + FRAME_HEADER + pageSize), littleEndian, checksum(wal.subarray(off, off + 8), littleEndian, sum));
    if (sum[0] !== view.getUint32(off + 16) || sum[1] !== view.getUint32(off + 20)) damagedAt = frame;
  }
  return undefined;
}

/**
 * Checks the WAL of the `file:` database at `databaseFile` (read through the runtime's `read`,
 * undefined when there is none) and throws a StoreOpenError naming it when it is damaged.
 */
export function checkWalFile(url: string, databaseFile: string, read: (path: string) => Uint8Array | undefined): void {
  const path = `${databaseFile}-wal`;
  const wal = read(path);
  const problem = wal && walProblem(wal);
  if (problem) {
    throw new StoreOpenError(printableUrl(url), `its write-ahead log ${path} is damaged: ${problem}. Restore the database from a backup; moving the -wal file aside starts from ${databaseFile} alone, without what the log held`);
  }
}
