// The log journal's files on Node (the journal itself: storage/log-journal.ts).
import { closeSync, ftruncateSync, openSync, readFileSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalFile } from '../../../storage/log-journal.ts';
import type { JournalPort } from '../../router/router.ts';

function journalFile(path: string): JournalFile {
  // Terminal output, like the database: readable by this user only (docs/security.md).
  const fd = openSync(path, 'a+', 0o600);
  return {
    append(parts) {
      let total = 0;
      for (const p of parts) total += p.length;
      let written = writevSync(fd, parts as Uint8Array[]);
      // A short write (rare on a regular file) continues from where it stopped.
      while (written < total) {
        let skip = written;
        const rest: Uint8Array[] = [];
        for (const p of parts) {
          if (skip >= p.length) skip -= p.length;
          else {
            rest.push(p.subarray(skip));
            skip = 0;
          }
        }
        written += writevSync(fd, rest);
      }
    },
    read: () => readFileSync(fd),
    truncate: () => ftruncateSync(fd, 0),
    close: () => closeSync(fd),
  };
}

/** The kernel's id of this boot: a journal from another boot may have lost its last writes. */
export function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

export const nodeJournalPort: JournalPort = {
  open: (stateDir) => ({ files: [journalFile(join(stateDir, 'log-journal.0')), journalFile(join(stateDir, 'log-journal.1'))], bootId: bootId() }),
};
