// How a session's process is run. `native`: node-pty runs the program itself. Multiplexer
// backends: the multiplexer (on a server-private socket) runs it, and node-pty runs a client
// attached to it, so the session outlives the host.

import type { IPty } from 'node-pty';
import type { PtyExit, SpawnSpec } from '../../src/ports.ts';

/** A running session as a backend hands it to the host. */
export interface Attached {
  /** What the host reads and writes: the program (native) or a multiplexer client attached to it. */
  pty: IPty;
  /** The program's pid: what `list` reports and what a kill is aimed at. */
  pid: number;
  cols: number;
  rows: number;
}

/** A session an earlier host left behind: still running (attached again), or ended meanwhile. */
export type Recovered = { sessionId: string; attached: Attached } | { sessionId: string; exit: PtyExit };

export interface Backend {
  readonly name: string;
  /** The session outlives the host: on a host shutdown only the attached client goes. */
  readonly survivesHost: boolean;
  /** Starts the session (argv[0] already resolved to `program`). Throws PtyHostError. */
  start(spec: SpawnSpec, program: string): Promise<Attached>;
  /**
   * The attached PTY ended with `ptyExit`. Resolves with how the session ended, or null when the
   * multiplexer session is still there (something detached our client) and should be attached again.
   */
  ended(sessionId: string, ptyExit: PtyExit): Promise<PtyExit | null>;
  reattach(sessionId: string): Promise<Attached>;
  /** Ends the session: `signal` to all its processes (SIGKILL for survivors later), and its multiplexer session. */
  kill(sessionId: string, pid: number, signal: NodeJS.Signals): Promise<void>;
  /** Sessions found from an earlier host (multiplexers only). */
  recover(): Promise<Recovered[]>;
}

/** The outer terminal every multiplexer client renders for: what the router's emulator is. */
export const CLIENT_TERM = 'xterm-256color';

/** Multiplexer session names come from session ids, so ids must be safe there (tmux forbids . and :). */
export function muxSessionName(sessionId: string): string | undefined {
  return /^[A-Za-z0-9_-]{1,64}$/.test(sessionId) ? `pw-${sessionId}` : undefined;
}

/** The reverse of muxSessionName, for names found on a multiplexer server. */
export function sessionIdOf(name: string): string | undefined {
  return /^pw-[A-Za-z0-9_-]{1,64}$/.test(name) ? name.slice(3) : undefined;
}
