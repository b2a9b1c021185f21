// The ports the session core talks to. Adapters implement them per runtime; tests swap them.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

// ---------------------------------------------------------------- PTY host

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

export interface PtyHostListener {
  onData(sessionId: string, data: Uint8Array): void;
  onExit(sessionId: string, exit: PtyExit): void;
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
  code: 'not_found' | 'bad_cwd' | 'exists' | 'backend_unavailable' | 'spawn_failed';
  message: string;
}

export interface PtyHost {
  /** Starts a process on a new PTY. Resolves with its pid or rejects with a PtySpawnError. */
  spawn(spec: SpawnSpec): Promise<{ pid: number }>;
  write(sessionId: string, data: Uint8Array): void;
  resize(sessionId: string, cols: number, rows: number): void;
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
   * received them (output, exits), then live ones. Call once the sessions list() named are
   * ready for their events, and again after each onHostRestored.
   */
  startEvents(): void;
  /** Flow control: stop reading session events (the host pauses its PTYs meanwhile) and start again. */
  pauseEvents(): void;
  resumeEvents(): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- storage

export type SessionState = 'created' | 'running' | 'closed';

export interface SessionRecord {
  id: string;
  instanceId: string;
  backend: string;
  sessionClass: string;
  argv: string[] | null;
  command: string | null;
  cwd: string | null;
  env: Record<string, string>;
  cols: number;
  rows: number;
  label: string | null;
  state: SessionState;
  /** ISO-8601 UTC. */
  createdAt: string;
  closedAt: string | null;
  exitCode: number | null;
  closeReason: string | null;
  /** Principal that created the session (null when auth is off). */
  createdBy: string | null;
}

export interface LogEntry {
  sessionId: string;
  sequence: number;
  /** Frame kind: Output, Resize, MembershipChanged, Keyframe, Closed, TaskStatusUpdate. */
  kind: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** The frame exactly as sent to JSON clients. */
  frame: string;
}

export interface SessionPatch {
  state?: SessionState;
  backend?: string;
  sessionClass?: string;
  cwd?: string | null;
  argv?: string[] | null;
  cols?: number;
  rows?: number;
  closedAt?: string | null;
  exitCode?: number | null;
  closeReason?: string | null;
}

export interface Store {
  createSession(rec: SessionRecord): Promise<void>;
  getSession(instanceId: string, sessionId: string): Promise<SessionRecord | undefined>;
  listSessions(instanceId: string): Promise<SessionRecord[]>;
  updateSession(sessionId: string, patch: SessionPatch): Promise<void>;
  /**
   * Queues a log frame for the next group commit and returns at once. Entries of one session
   * must be appended in increasing sequence order.
   */
  appendLog(entry: LogEntry): void;
  /** Log frames with sequence > afterSequence, in order; includes queued, not yet committed ones. */
  readLog(sessionId: string, afterSequence: number, limit?: number): Promise<LogEntry[]>;
  /** The session's latest log frame of this kind (e.g. its latest Keyframe), queued entries included. */
  lastFrameOfKind(sessionId: string, kind: string): Promise<LogEntry | undefined>;
  /** Highest sequence logged for the session (0 when none), queued entries included. */
  lastSequence(sessionId: string): Promise<number>;
  /** Lowest sequence still retained for the session, or null when its log is empty. */
  oldestSequence(sessionId: string): Promise<number | null>;
  /**
   * Retention (DECISIONS §7): deletes the session's log frames that are both beyond the newest
   * `keepFrames` and older than `keepSeconds`. Resolves with the number deleted.
   */
  prune(sessionId: string, opts: { keepFrames: number; keepSeconds: number; now: number }): Promise<number>;
  /** Resolves when everything appended so far is committed. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- client transport

/** One accepted WebSocket, as the session core sees it. Sends are best-effort and never throw. */
export interface ClientConnection {
  /** True when the connection negotiated `pty-ws.v1.binary`. */
  readonly binary: boolean;
  sendText(text: string): void;
  sendBinary(bytes: Uint8Array): void;
  /** Bytes queued in the transport and not yet sent (0 where the runtime cannot tell). */
  bufferedAmount(): number;
  close(code: number, reason: string): void;
}
