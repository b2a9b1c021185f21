// The router’s store: sessions, their numbering and their log (storage/ implements it).
import type { LogEntry } from '../protocol/logged-frames.ts';

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
