// The log journal's files on Deno (the journal itself: storage/log-journal.ts).
import type { JournalFile } from '../../../storage/log-journal.ts';
import { concatBytes } from '../../core/bytes.ts';
import type { JournalPort } from '../../router/router.ts';

function journalFile(path: string): JournalFile {
  // Terminal output, like the database: readable by this user only (docs/security.md).
  const file = Deno.openSync(path, { read: true, append: true, create: true, mode: 0o600 });
  return {
    append(parts) {
      const bytes = concatBytes(parts);
      for (let done = 0; done < bytes.length; ) done += file.writeSync(bytes.subarray(done));
    },
    read: () => Deno.readFileSync(path),
    truncate: () => file.truncateSync(0),
    close: () => file.close(),
  };
}

/** The kernel's id of this boot: a journal from another boot may have lost its last writes. */
export function bootId(): string | null {
  try {
    return Deno.readTextFileSync('/proc/sys/kernel/random/boot_id').trim() || null;
  } catch {
    return null;
  }
}

export const denoJournalPort: JournalPort = {
  open: (stateDir) => ({ files: [journalFile(`${stateDir}/log-journal.0`), journalFile(`${stateDir}/log-journal.1`)], bootId: bootId() }),
};
