// A session as the PTY host holds it, and how often a multiplexer client that keeps getting
// detached is attached again.
import type { IPty } from 'node-pty';
import type { PtySessionInfo } from '../src/ports/pty-host.ts';
import type { Backend } from './backends/backend.ts';
import type { PtyInput } from './pty-input.ts';

/** A multiplexer client that keeps getting detached is attached again at most this often in a row. */
const MAX_QUICK_REATTACHES = 3;
const QUICK_REATTACH_MS = 10_000;

export interface Session {
  readonly backend: Backend;
  readonly info: PtySessionInfo;
  /** The program (native) or the multiplexer client attached to it; replaced on a re-attach. */
  pty: IPty;
  /** The bounded way into `pty` (pty/pty-input.ts); replaced with it. */
  input: PtyInput;
  /** See holdSlave (pty/slave-hold.ts). */
  slaveFd: number | undefined;
  /** The PTY's process has been reaped, so its remaining output is bounded and is read even while paused. */
  reaped: boolean;
  /** A kill was asked for: a client that leaves is not attached again. */
  killed: boolean;
  attachedAt: number;
  reattaches: number;
}

/** Whether a multiplexer client that left may be attached again (at most a few times in quick succession). */
export function mayReattach(session: Session): boolean {
  if (Date.now() - session.attachedAt > QUICK_REATTACH_MS) session.reattaches = 0;
  return session.reattaches < MAX_QUICK_REATTACHES;
}
