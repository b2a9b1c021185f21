// The PTY host as the router sees it: sessions spawned, fed and resized, their output and exits (src/host-link/).
export interface SpawnSpec {
  sessionId: string;
  /** `native` (node-pty runs the program) or a multiplexer the host offers (`tmux`, `screen`). */
  backend: string;
  /** Exact argv; argv[0] is resolved on PATH when it has no slash. */
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  /** The remote host to run it on, by name (docs/remote-hosts.md); absent: the local host. Not sent to the host. */
  host?: string;
}

export interface PtyExit {
  exitCode: number | null;
  signal: number | null;
}

export interface PtySessionInfo {
  sessionId: string;
  backend: string;
  /** The program's pid (inside the multiplexer for a managed session); 0 once it has ended. */
  pid: number;
  cols: number;
  rows: number;
}

/** What a router already logged of one PTY host's events (docs/protocol.md §3.4): the highest event number per session. */
export interface HostResume {
  epoch: string;
  after: Record<string, number>;
}

export interface PtyHostListener {
  /**
   * `data` is valid only during the call (the connection reads into the same memory again): a
   * listener copies what it keeps. `n`: the event's number in its host (see PtyHost.ack); absent
   * from hosts that do not number them.
   */
  onData(sessionId: string, data: Uint8Array, n?: number): void;
  onExit(sessionId: string, exit: PtyExit, n?: number): void;
  /** The connection to the host was lost; until onHostRestored nothing reaches its sessions. */
  onHostLost?(reason: string): void;
  /**
   * A host is reachable again after onHostLost (the same one, or a new one that re-attached the
   * multiplexer sessions): list() it, re-adopt what it runs, then startEvents().
   */
  onHostRestored?(): void;
}

/** A failed spawn: `code` says why, `message` is safe to show to the joining client. */
export interface PtySpawnError {
  /** `not_allowed`: a remote host's own policy refused it (docs/remote-hosts.md). */
  code: 'not_found' | 'bad_cwd' | 'bad_env' | 'exists' | 'backend_unavailable' | 'spawn_failed' | 'not_allowed';
  message: string;
}

export interface PtyHost {
  /** Starts a process on a new PTY. Resolves with its pid or rejects with a PtySpawnError. */
  spawn(spec: SpawnSpec): Promise<{ pid: number }>;
  /**
   * Queues input for the session's PTY. `onFailed` hears (once, later) when the host could not
   * write it: the session or its process is gone (docs/protocol.md §9.2, `write_failed`).
   */
  write(sessionId: string, data: Uint8Array, onFailed?: (message: string) => void): void;
  /**
   * Applies a size. `done` hears whether the host applied it (no argument) or why not (a message for
   * the client), synchronously as the answer is read, so before any event the host sent after it:
   * the Resize frame is numbered right where the size took effect, ahead of the program's redraw.
   */
  resize(sessionId: string, cols: number, rows: number, done?: (error?: string) => void): void;
  /**
   * Ends the session: the signal (default SIGHUP) to every process of it, SIGKILL to whatever
   * is left a moment later, and for a multiplexer session the multiplexer's session too.
   */
  kill(sessionId: string, signal?: string): void;
  /**
   * Sessions the host runs, and those whose end it has not reported yet (they ended while no
   * router received events): what a router re-adopts at start.
   */
  list(): Promise<PtySessionInfo[]>;
  subscribe(listener: PtyHostListener): () => void;
  /**
   * Session events flow to the listeners from now on: first what the host held while no router
   * received them (output, exits), and whatever it sent that no router acknowledged but
   * `resume` names as logged, then live ones. Call once the sessions list() named are
   * ready for their events, and again after each onHostRestored. `credit`: the caller gives
   * credit back for every session's output as it takes it (credit()), so each session runs the
   * credit loop (docs/architecture.md, "The credit loop"); without it output is not bounded.
   */
  startEvents(resume?: HostResume, credit?: boolean): void;
  /** Durability: the session's events up to `n` are journaled (or were of no use): the host need not send them again. */
  ack(sessionId: string, n: number): void;
  /**
   * The credit loop: `bytes` more of the session's output are taken. A session whose output is
   * not taken pauses alone once the loop's high mark is untaken; other sessions flow on.
   */
  credit(sessionId: string, bytes: number): void;
  /** The connected host's id for its event numbers; null when none is connected, or it does not number them. */
  readonly epoch: string | null;
  /** The router-wide backstop: stop reading session events (the host pauses every PTY meanwhile) and start again. */
  pauseEvents(): void;
  resumeEvents(): void;
  close(): Promise<void>;
}
