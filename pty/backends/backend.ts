// How a session's process is run. `native`: node-pty runs the program itself. Multiplexer
// backends: the multiplexer (on a server-private socket) runs it, and node-pty runs a client
// attached to it, so the session outlives the host.

import type { IPty } from 'node-pty';
import type { PtyExit, SpawnSpec } from '../../src/ports/pty-host.ts';
import { PtyHostError } from '../wire/protocol.ts';
import type { SpawnTerminal } from './terminal-spawn.ts';

/** How long a multiplexer may take to show a new session, and how often we look. */
const CREATE_TIMEOUT_MS = 5000;
const POLL_MS = 20;

/** A running session as a backend hands it to the host. */
export interface Attached {
  /** What the host reads and writes: the program (native) or a multiplexer client attached to it. */
  pty: IPty;
  /** The program's pid: what `list` reports and what a kill is aimed at. */
  pid: number;
  cols: number;
  rows: number;
  /** The PTY's process already ended while the backend was setting up (the host handles it as an exit). */
  exited?: PtyExit;
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
  /** On host shutdown: stops a multiplexer server that runs no session any more. */
  stopIfIdle?(): Promise<void>;
}

/**
 * Starts a multiplexer client on a PTY, paused: what it prints before the host wires it up
 * waits in the kernel instead of being emitted to nobody.
 */
export function spawnClient(spawn: SpawnTerminal, file: string, args: string[], options: { cols: number; rows: number; cwd: string; env: Record<string, string> }): IPty {
  const pty = spawn(file, args, { name: CLIENT_TERM, encoding: null, ...options });
  pty.pause();
  return pty;
}

/**
 * Waits for `found` to return a value while the client lives. Resolves with the value, or with
 * the client's exit if it ended first; rejects with a PtyHostError (killing the client) on timeout.
 */
export async function untilFound<T>(client: IPty, what: string, found: () => Promise<T | undefined> | T | undefined): Promise<{ value: T } | { exited: PtyExit }> {
  let exited: PtyExit | undefined;
  const sub = client.onExit(({ exitCode, signal }) => (exited = signal ? { exitCode: null, signal } : { exitCode, signal: null }));
  try {
    for (const deadline = Date.now() + CREATE_TIMEOUT_MS; Date.now() < deadline; ) {
      if (exited) return { exited };
      const value = await found();
      if (value !== undefined) return { value };
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    client.kill('SIGKILL');
    throw new PtyHostError('spawn_failed', `${what} did not happen within ${CREATE_TIMEOUT_MS} ms`);
  } finally {
    sub.dispose();
  }
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
