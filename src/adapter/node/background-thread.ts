// A worker thread whose work is background (the screen emulators, the log commits) runs at a
// lower CPU priority than the router's main thread, which carries every keystroke and its echo
// (docs/architecture.md, "Router flow control"). On Linux a thread is a task with its own id,
// and setpriority() on that id renices the thread alone; elsewhere this does nothing.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The niceness of background threads (0 is the main thread's; 19 the lowest). */
export const BACKGROUND_NICENESS = 10;

/** Lowers the calling thread's priority; returns whether it could. */
export function runInBackground(niceness = BACKGROUND_NICENESS): boolean {
  try {
    // "<pid>/task/<tid>" for the calling thread.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isSafeInteger(tid) || tid <= 0) return false;
    setPriority(tid, niceness);
    return true;
  } catch {
    return false;
  }
}
