// The ports the session core talks to. Adapters implement them per runtime; tests swap them.
import type { Artifact, Message, Task, TaskState } from '../protocol/a2a.ts';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Marks a hop of the echo path with the time it is reached (src/adapter/node/hop-trace.ts);
 * `bytes`: the PTY-host frame at that hop, if any, to name its type. A diagnostic, off unless
 * PTY_HOP_TRACE_DIR is set: its holders keep `undefined` then.
 */
export type HopTrace = (hop: string, bytes?: Uint8Array) => void;

export interface Logger {
  /** A field may hold a thrown value as itself (`{ error: e }`): the line keeps its stack and causes (src/services/logger.ts). */
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
  /** Someone has joined it: only a session that never had a member makes its first joiner controller (docs/protocol.md §5.1). */
  hadMember: boolean;
  /** How it was made (storage/schema.ts): an `a2a` context ends after an idle time (docs/a2a.md). */
  createdVia: 'rest' | 'a2a' | null;
  /** The remote PTY host it runs on (docs/remote-hosts.md); null: the router's local host. */
  host: string | null;
}

/** A session's numbering (docs/protocol.md §3.4). */
export interface SequenceState {
  /** The highest sequence in the log (committed or queued), or remembered after retention. */
  stored: number;
  /** The highest number a router may have handed out. */
  ceiling: number;
  /** Numbers skipped in all after crashes. */
  skipped: number;
}

export interface LogEntry {
  sessionId: string;
  sequence: number;
  /** Frame kind: Output, Resize, MembershipChanged, Keyframe, Closed, TaskStatusUpdate. */
  kind: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** The frame exactly as sent to JSON clients (for Output, built on first read: src/protocol/output-frame.ts). */
  readonly frame: string;
  /**
   * Output only: the frame's id and the PTY's bytes. The store and the journal keep these rather
   * than `frame`, so the output path does no base64 or JSON unless a JSON client or reader asks.
   */
  output?: { readonly id: string; readonly data: Uint8Array };
  /** For Output: the last PTY host event folded in (journal only, docs/protocol.md §3.4). */
  hostEvent?: { epoch: string; n: number };
}

/**
 * A run of one session's log frames the store gave up on: they were delivered live but a
 * replay will not include them.
 */
export interface LogLoss {
  sessionId: string;
  /** First and last sequence of the run; every sequence between them is lost too. */
  first: number;
  last: number;
  frames: number;
  /**
   * `commit_failed`: the database kept refusing the write; `queue_full`: it was unavailable so long
   * that the write queue hit its memory cap; `skipped`: numbers a crash may have used, given up at
   * the next start (docs/protocol.md §3.4).
   */
  reason: 'commit_failed' | 'queue_full' | 'skipped';
}

/**
 * What is kept beyond the replay floor (docs/operations.md, "Disk"), for the retention sweep
 * (src/router/retention-sweep.ts): each method works on one instance's sessions and resolves with what it
 * deleted.
 */
export interface LogRetention {
  /** Bytes of the instance's logs. */
  logBytes(instanceId: string): Promise<number>;
  /** Sessions that ended before `before` (ISO-8601), with their log, lost runs, tasks and share links. */
  deleteEnded(instanceId: string, before: string): Promise<number>;
  /** Finished tasks last updated before `before`, and share links revoked or expired before it. */
  deleteFinished(instanceId: string, before: string): Promise<number>;
  /** Every log over `maxBytes` is cut to its newest frames within it (its newest frame stays): bytes deleted. */
  trimOver(instanceId: string, maxBytes: number): Promise<number>;
  /** Whole logs of ended sessions, oldest ended first, until `bytes` are gone: bytes deleted. */
  dropEndedLogs(instanceId: string, bytes: number): Promise<number>;
  /** How many sessions that have not ended have a log. */
  liveWithLogs(instanceId: string): Promise<number>;
}

/** A run of a session's sequence numbers whose frames the log will never have (Store.lostRanges). */
export interface LostRange {
  first: number;
  last: number;
  reason: string;
}

export interface SessionPatch {
  state?: SessionState;
  backend?: string;
  sessionClass?: string;
  cwd?: string | null;
  argv?: string[] | null;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  closedAt?: string | null;
  exitCode?: number | null;
  closeReason?: string | null;
  hadMember?: boolean;
}

export interface QueueListener {
  queued(bytes: number): void;
  settled(bytes: number): void;
}

/** A claim on an instance id (docs/operations.md, "One router per instance"). */
export interface LeaseClaim {
  instanceId: string;
  /** A random token of the claiming router process. */
  owner: string;
  /** Names the claimant's state directory (from its lock): a holder with the same key is known dead. */
  stateKey: string;
  /** Who the claimant is, as JSON, for another router's refusal message. */
  holder: string;
  expiresAt: number;
  now: number;
}

export interface InstanceLease {
  owner: string;
  holder: string;
  expiresAt: number;
}

export interface InstanceLeaseStore {
  /** Takes the lease if it is free, expired, the claimant's, or held from the claimant's state directory; returns its holder after the attempt. */
  acquire(claim: LeaseClaim): Promise<InstanceLease>;
  /** Extends the lease while `owner` holds it; false when it does not (any more). */
  renew(instanceId: string, owner: string, expiresAt: number): Promise<boolean>;
  release(instanceId: string, owner: string): Promise<void>;
}

/** One instance in the registry (docs/deployment.md, "A fleet"). */
export interface InstanceRecord {
  instanceId: string;
  /** A random token of the router run that wrote it. */
  owner: string;
  /** The http(s) origin clients reach it at (PTY_WS_PUBLIC_URL, else its listen URL). */
  baseUrl: string;
  version: string;
  /** ISO-8601 UTC. */
  startedAt: string;
  /** Milliseconds since the epoch, by the instance's own clock. */
  lastSeenAt: number;
  /** Its heartbeat cadence, by which readers judge its last_seen_at stale. */
  heartbeatMs: number;
  /** Set by a clean stop; null while it runs (or after it died without one). */
  stoppedAt: number | null;
}

export interface InstanceRegistryStore {
  /** Records the instance as started now, replacing what an earlier run of it left (the caller holds its lease). */
  register(rec: InstanceRecord): Promise<void>;
  /** Writes the row only where the instance has none (someone removed it); never replaces another run's. */
  restore(rec: InstanceRecord): Promise<void>;
  /** Moves its last_seen_at while `owner`'s run wrote the row; false otherwise. */
  heartbeat(instanceId: string, owner: string, at: number): Promise<boolean>;
  /** Marks a clean stop of `owner`'s run (a later run's row is left alone). */
  stopped(instanceId: string, owner: string, at: number): Promise<void>;
  list(): Promise<InstanceRecord[]>;
  /** The sessions of every registered instance, oldest first. */
  registeredSessions(): Promise<SessionRecord[]>;
  get(instanceId: string): Promise<InstanceRecord | undefined>;
  /** The registered instance that owns the session, if any. */
  sessionOwner(sessionId: string): Promise<InstanceRecord | undefined>;
}

/** A share link (docs/sharing.md): a bearer for one session, of which only the hash is kept. */
export interface ShareRecord {
  id: string;
  sessionId: string;
  instanceId: string;
  tokenSha256: string;
  scope: 'pty:observe' | 'pty:control';
  label: string | null;
  /** The principal that minted it. */
  createdBy: string;
  /**
   * The SHA-256 of the bearer token its root minter (the first above it that is no share) stood
   * on, where that token can be checked later (token map, dev token): the share holds only while
   * it still authenticates. Null for a JWT or certificate minter, which bounds `expiresAt` instead.
   */
  minterTokenSha256: string | null;
  /** ISO-8601 UTC. */
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

export interface ShareStore {
  create(rec: ShareRecord): Promise<void>;
  /** The share whose token has this hash, revoked or not. */
  byTokenHash(tokenSha256: string): Promise<ShareRecord | undefined>;
  /** The share with this id, revoked or not. */
  byId(shareId: string): Promise<ShareRecord | undefined>;
  /** The session's shares that are neither revoked nor expired at `now` (ms), oldest first. */
  listActive(sessionId: string, now: number): Promise<ShareRecord[]>;
  /** Marks it revoked; false when the session has no such share, or it was revoked already. */
  revoke(sessionId: string, shareId: string, at: string): Promise<boolean>;
  /** The instance's shares that are neither revoked nor expired at `now` (ms), only those `createdBy` minted when given; oldest first. */
  listInstanceActive(instanceId: string, now: number, createdBy?: string): Promise<ShareRecord[]>;
}

/** A remote PTY host's credential (docs/remote-hosts.md): its name and the SHA-256 of its token. */
export interface HostRecord {
  instanceId: string;
  name: string;
  tokenSha256: string;
  createdBy: string;
  /** ISO-8601 UTC. */
  createdAt: string;
}

export interface HostStore {
  /** Stores the host's credential, replacing any earlier one of that name (whose token is refused from now on). */
  put(rec: HostRecord): Promise<void>;
  byTokenHash(tokenSha256: string): Promise<HostRecord | undefined>;
  list(instanceId: string): Promise<HostRecord[]>;
  /** Revokes it; false when there was none. */
  remove(instanceId: string, name: string): Promise<boolean>;
}

export interface Store {
  createSession(rec: SessionRecord): Promise<void>;
  /**
   * Stores `rec` unless its creator already has `limit` sessions of its instance that have not
   * ended (false: refused, nothing stored). Counted and stored in one transaction, so concurrent
   * creations, in this router or in another on the same database, never pass the limit together.
   */
  createSessionWithin(rec: SessionRecord & { createdBy: string }, limit: number): Promise<boolean>;
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
  /** Where the session's numbering stands (docs/protocol.md §3.4). */
  sequenceState(sessionId: string): Promise<SequenceState>;
  /** Stores a higher ceiling (durably: the write is synced); resolves once it is. */
  reserveSequences(sessionId: string, ceiling: number): Promise<void>;
  /**
   * After a crash that may have lost frames: the numbers up to `ceiling` are given up, and
   * `skipped` more are counted in the session's record.
   */
  skipSequences(sessionId: string, ceiling: number, skipped: number): Promise<void>;
  /**
   * The runs of the session's numbers lost for good (frames the database never took, numbers a
   * crash skipped) that end after `after` and start at or before `upTo`, in order: a replay
   * across one declares it (docs/protocol.md §6.2). Known losses not yet stored are included.
   */
  lostRanges(sessionId: string, after: number, upTo: number): Promise<LostRange[]>;
  /** An orderly stop: each session's ceiling comes down to the last number it handed out, so the next start skips none. */
  releaseSequences(last: ReadonlyMap<string, number>): Promise<void>;
  /**
   * Retention (docs/protocol.md §6.5): deletes the session's log frames that are both beyond the newest
   * `keepFrames` and older than `keepSeconds`. Resolves with the number deleted.
   */
  prune(sessionId: string, opts: { keepFrames: number; keepSeconds: number; now: number }): Promise<number>;
  /**
   * Calls `listener` with every run of log frames given up on (after the commit retries ran
   * out, or dropped to bound memory while the database is down). Returns the unsubscribe.
   */
  onLogLoss(listener: (loss: LogLoss) => void): () => void;
  /**
   * Hears the bytes of log frames as they join the write queue and as they leave it (committed,
   * given up on or dropped): the hub pauses PTY output while the writer is far behind, so a
   * stream faster than the disk slows down instead of filling the queue. Returns the unsubscribe.
   */
  watchQueue(listener: QueueListener): () => void;
  /** Resolves when everything appended so far is committed; rejects if frames were given up on meanwhile. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- screen model

export interface ScreenSnapshot {
  /** vt100-screen-state-v1: the escape-sequence stream that repaints the screen. */
  snapshot: string;
  cols: number;
  rows: number;
  /** Sequence of the latest Output/Resize folded in. */
  anchor: number;
}

/** A terminal emulator fed every Output byte of one session, in order. */
export interface Screen {
  /** `data`: a logged frame's bytes, which never change afterwards: the screen may keep them. */
  write(data: Uint8Array, sequence: number): void;
  resize(cols: number, rows: number, sequence: number): void;
  /** The state after everything written so far (later writes are not in it); waits for the parser. */
  snapshot(): Promise<ScreenSnapshot>;
  /**
   * The state the parser has reached now, at a chunk boundary, without waiting for the bytes still
   * queued: its anchor may be older than the last write.
   */
  snapshotNow(): Promise<ScreenSnapshot>;
  /** Bytes written but not parsed yet: how far the emulator lags behind the output. */
  backlog(): number;
  dispose(): void;
}

/**
 * `onParsed` hears how many bytes the emulator folded in, as it catches up (for flow control);
 * `onFailed`, that the emulator broke (it threw): the screen is of no more use (src/screen/session-screen.ts).
 */
export type ScreenFactory = (cols: number, rows: number, onParsed?: (bytes: number) => void, onFailed?: (error: Error) => void) => Screen;

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
  /**
   * Runs `write`, whose sends reach the network together: a few large writes rather than one
   * system call per frame (a flush's replay, docs/performance.md). Order is kept. Absent where the
   * runtime offers no way to do it: the sends then go one by one.
   */
  batch?(write: () => void): void;
}

// ---------------------------------------------------------------- A2A tasks

/** One write of a task: its row, plus what it gained since the last write. */
export interface TaskWrite {
  /** Inserted, or replacing the stored one; its `history` and `artifacts` are not written from here. */
  task: Task;
  /** Messages appended to its history, with their 0-based positions in it. */
  messages?: Array<{ position: number; message: Message }>;
  /** Artifacts added to it, with their 0-based positions among its artifacts. */
  artifacts?: Array<{ position: number; artifact: Artifact }>;
  /**
   * Push configs set by the message that created the task (SendMessage `configuration`): stored
   * with it, so they hear its first state. Every write also queues, for each of the task's push
   * configs, the state it writes and the artifacts it adds (docs/a2a.md, "Push notifications").
   */
  pushConfigs?: PushConfigRecord[];
}

export interface TaskReadOptions {
  /** Keep only the newest this many history messages (undefined = all, 0 = none). */
  historyLength?: number;
  includeArtifacts: boolean;
}

/** Where a ListTasks page starts: after this task in newest-first order. */
export interface TaskCursor {
  statusTimestamp: string;
  id: string;
}

export interface TaskPage {
  tasks: Task[];
  /** Matching tasks in the whole context, not just this page. */
  total: number;
  /** Set when more tasks follow this page. */
  next: TaskCursor | null;
}

export interface TaskStore {
  /** Writes in order with every other write of the store; resolves once committed. */
  saveTask(write: TaskWrite): Promise<void>;
  getTask(contextId: string, taskId: string, opts: TaskReadOptions): Promise<Task | undefined>;
  /** The context's tasks, newest status first (ties by id, descending). */
  listTasks(contextId: string, opts: TaskReadOptions & { pageSize: number; after?: TaskCursor; state?: TaskState }): Promise<TaskPage>;
  /** Tasks of this instance's sessions that are not in a terminal state, with their history sizes. */
  unfinishedTasks(instanceId: string): Promise<Array<{ task: Task; historySize: number }>>;
  /** The session (context) a task of this instance belongs to; task ids are unique per instance. */
  taskContext(instanceId: string, taskId: string): Promise<string | undefined>;
  /** A ListTasks page across the instance's sessions (the standard A2A bindings), ordered like listTasks. */
  listInstanceTasks(query: InstanceTaskQuery): Promise<TaskPage>;
  /** A ListTasks page across the sessions of every registered instance (the fleet agent, docs/deployment.md), ordered like listTasks. */
  listFleetTasks(query: FleetTaskQuery): Promise<FleetTaskPage>;
  /** The session and instance of a task of any registered instance (task ids are the primary key of the shared database's tasks table). */
  fleetTaskOwner(taskId: string): Promise<TaskOwner | undefined>;
}

export interface TaskOwner {
  contextId: string;
  instanceId: string;
}

export interface FleetTaskPage extends TaskPage {
  /** The owning instance of each listed task's session, by session id. */
  owners: ReadonlyMap<string, string>;
}

export interface InstanceTaskQuery extends FleetTaskQuery {
  instanceId: string;
}

export interface FleetTaskQuery extends TaskReadOptions {
  pageSize: number;
  after?: TaskCursor;
  /** Only this session's tasks. */
  contextId?: string;
  /** Only tasks of these sessions (a principal restricted to some sessions); absent = every session. */
  contexts?: readonly string[];
  state?: TaskState;
  /** Only tasks whose status changed strictly after this instant (ISO-8601 UTC, as stored). */
  statusTimestampAfter?: string;
}

// ---------------------------------------------------------------- push notifications (docs/a2a.md)

/** A task's webhook, as one principal set it. */
export interface PushConfigRecord {
  /** The row's own id, which its deliveries name. */
  key: string;
  taskId: string;
  principalId: string;
  /** The A2A `id`, unique per task and principal. */
  configId: string;
  url: string;
  token: string | null;
  authScheme: string | null;
  authCredentials: string | null;
  /** ISO-8601 UTC. */
  createdAt: string;
}

/** One queued notification of the outbox, with its config's webhook. */
export interface PushDelivery {
  id: number;
  configKey: string;
  taskId: string;
  /** Who set its config. */
  principalId: string;
  /** `status`: `event` is the StreamResponse JSON. `artifact`: `event` is the artifact id, sent as its chunks from `chunk` on. */
  kind: 'status' | 'artifact';
  event: string;
  chunk: number;
  /** Failed attempts so far. */
  attempts: number;
  url: string;
  token: string | null;
  authScheme: string | null;
  authCredentials: string | null;
}

export interface PushStore {
  /** Stores the config, replacing the principal's config of that task with the same `configId`; resolves with what is stored. */
  saveConfig(rec: PushConfigRecord): Promise<PushConfigRecord>;
  config(taskId: string, principalId: string, configId: string): Promise<PushConfigRecord | undefined>;
  /** The principal's configs of the task in creation order, after the one keyed `afterKey`; `next` when more follow. */
  configs(taskId: string, principalId: string, page: { pageSize: number; afterKey?: string }): Promise<{ configs: PushConfigRecord[]; next: string | null }>;
  countConfigs(taskId: string, principalId: string): Promise<number>;
  /** Deletes the config and its undelivered notifications; false when there was none. */
  deleteConfig(taskId: string, principalId: string, configId: string): Promise<boolean>;
  /** Up to `limit` notifications of the instance's tasks due at `now`, each the oldest of its config, none leased; soonest first. */
  due(instanceId: string, now: number, limit: number): Promise<PushDelivery[]>;
  /** When the instance's next notification falls due (ms), or null when none is queued. */
  nextDue(instanceId: string): Promise<number | null>;
  /** Takes the notification for `owner` until `leaseUntil`, unless another holds it at `now`; false when another has it. */
  claim(id: number, owner: string, leaseUntil: number, now: number): Promise<boolean>;
  /** Chunks before `chunk` were delivered; the lease is extended. */
  progressed(id: number, owner: string, chunk: number, leaseUntil: number): Promise<void>;
  /** Delivered (or given up on): the row goes. */
  done(id: number, owner: string): Promise<void>;
  /** A failed attempt: tried again from `nextAttemptAt`, by whichever router then claims it. */
  failed(id: number, owner: string, attempts: number, nextAttemptAt: number, error: string): Promise<void>;
  /** Trims each of the instance's configs to its oldest `keep` notifications; what went, per config. */
  trim(instanceId: string, keep: number): Promise<Array<{ configKey: string; taskId: string; dropped: number }>>;
  /** An artifact of a task, for its notification. */
  artifact(taskId: string, artifactId: string): Promise<{ contextId: string; artifact: Artifact } | undefined>;
}

/** A timer that can be called off. */
export interface Timer {
  cancel(): void;
}

/** Schedules callbacks: the real clock's in production, a test's own elsewhere. */
export interface Timers {
  after(ms: number, fn: () => void): Timer;
}

/** Sends webhooks; the policy (which addresses may be reached) is the caller's (src/a2a/webhook-policy.ts). */
export interface WebhookTransport {
  /** The addresses `hostname` resolves to now; an IP literal resolves to itself. */
  resolve(hostname: string): Promise<string[]>;
  /**
   * POSTs `body` to `url` over a connection to `address` (one `resolve` gave, already checked), the
   * URL's host named in Host and in TLS (SNI, certificate check); a redirect is not followed.
   * Resolves with the response status; rejects on a network error, after `timeoutMs`, or once `signal` aborts.
   */
  post(req: { url: URL; address: string; headers: Record<string, string>; body: string; timeoutMs: number; signal?: AbortSignal }): Promise<number>;
}
