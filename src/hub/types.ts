// The hub's contract with the modules above it (src/tasks/, routes/) and between its own parts:
// types only, so every hub file can depend on this one and on nothing that depends back on it.
import type * as v from 'valibot';
import type { Principal } from '../auth/principal.ts';
import type { BindingError, PtyError } from '../protocol/errors.ts';
import type { ClientEnvelope } from '../protocol/envelope.ts';
import type { CloseReason, GoodbyePayload, MembershipLists, RoleAssignedPayload, TaskStatusUpdatePayload } from '../protocol/server-payloads.ts';
import type { LogEntry } from '../protocol/logged-frames.ts';
import type { ScreenSnapshot } from '../ports/screen.ts';
import type { SessionRecord, SessionState } from '../ports/store.ts';

export type { CloseReason };

/**
 * What happens in a session, as the session logic says it: typed values, with raw bytes and
 * snapshots as they are. wire.ts turns them into frames (JSON envelope, base64, PW1O) once.
 */
export type SessionEvent =
  /** `framed`: `data` with room for its PW1O head before it (src/hub/gathered-output.ts), when it has that. */
  | { kind: 'Output'; data: Uint8Array; framed?: Uint8Array }
  | { kind: 'Resize'; cols: number; rows: number }
  | { kind: 'MembershipChanged'; members: MembershipLists }
  | { kind: 'Keyframe'; snapshot: ScreenSnapshot }
  | { kind: 'Closed'; exitCode: number | null; reason: CloseReason; detail?: string }
  | { kind: 'TaskStatusUpdate'; update: TaskStatusUpdatePayload; serviceParameters?: Record<string, unknown> };

/**
 * A frame for one connection (docs/protocol.md §3.1), as the session logic says it: not logged,
 * numbered with `sequence` (the latest number that connection may have seen), echoing `id` (the
 * request it answers) when it has one. wire.ts encodes it, once, when the connection sends it.
 */
export type Unicast = UnicastBody & { sequence: number; id?: string };

export type UnicastBody =
  | { kind: 'RoleAssigned'; clientId: string; role: RoleAssignedPayload['role']; downgraded: boolean; reason?: string; ignored?: readonly string[] }
  | { kind: 'Keyframe'; snapshot: ScreenSnapshot }
  /** PTY_OUTPUT_LAGGED: Output up to `anchor` was dropped for this connection; a Keyframe follows. */
  | { kind: 'OutputLagged'; anchor: number }
  /** A PTY-level Error (PTY_WRITE_FAILED, PTY_RESIZE_FAILED, KEYFRAME_UNAVAILABLE). */
  | { kind: 'PtyError'; error: PtyError }
  /** The binding's Error frame. */
  | { kind: 'Error'; error: BindingError }
  | { kind: 'Goodbye'; reason: GoodbyePayload['reason'] };

/** A client with a task queued or running in the session (docs/protocol.md, MembershipChanged `kind: "agent"`). */
export interface AgentPresence {
  client_id: string;
  label: string;
  /** What it is doing or waiting for, for the humans. */
  activity: string;
}

/** A numbered log frame, encoded once for every connection it goes to (and the store). */
export interface LogFrame {
  readonly sequence: number;
  readonly json: string;
  /** Raw bytes of an Output frame. */
  readonly data?: Uint8Array;
  /** The PW1O form of an Output frame, for binary connections (encoded on first use). */
  readonly binary?: Uint8Array;
}

/** A connection log frames can be addressed to (its Member once joined). */
export interface LogSink {
  sendLog(frame: LogFrame): void;
}

/** Something that follows a session's terminal without being a member of it (the task runner). */
export interface SessionObserver {
  /** PTY output, in log order, right after its Output frame was emitted. */
  output?(data: Uint8Array): void;
  /** Bytes controller `clientId` typed. */
  input?(data: Uint8Array, clientId: string): void;
  /** Member `clientId` left the session or its connection closed. */
  left?(clientId: string): void;
  /** The process is gone; runs before the Closed frame is emitted, so frames it emits come first. */
  ended?(exitCode: number | null, reason: CloseReason): void;
}

/**
 * One session as the task runner and the REST routes use it: read its state, follow its terminal,
 * type into it, and address log frames to chosen connections. Joining and the frame verbs stay
 * inside the hub (src/hub/attachment.ts).
 */
export interface Session {
  readonly id: string;
  readonly state: SessionState;
  /** The latest log-frame sequence. */
  readonly currentSequence: number;
  /** Numbers skipped after crashes (docs/protocol.md §3.4). */
  readonly skippedSequences: number;
  /** The record as this router has it: ahead of the database, where its updates wait behind queued log commits. */
  readonly latestRecord: Readonly<SessionRecord>;
  /** The argv the process was started with (null before it first started). */
  readonly argv: readonly string[] | null;
  /** Ended, or asked to end (REST DELETE): it takes no more work. */
  readonly ending: boolean;
  membership(): MembershipLists;
  /** The agents with work in the session now; a change is announced with MembershipChanged. */
  showAgents(agents: readonly AgentPresence[]): void;
  /** Until the process ends, `observer` sees its output, controller input, members leaving and its end. */
  observe(observer: SessionObserver): void;
  /** Starts the process with the session's own settings if nobody has yet (a join does the same). */
  ensureRunning(): Promise<void>;
  /** Writes bytes to the PTY on behalf of the server (a task), not of a member. */
  type(data: Uint8Array): void;
  /** Log entries in (replayFrom, upTo], or the REPLAY_OUT_OF_RANGE error to send (docs/protocol.md §6). */
  replayRange(replayFrom: number, upTo: number): Promise<AsyncIterable<LogEntry[]> | BindingError>;
  /**
   * A TaskStatusUpdate log frame, numbered and logged like every other, delivered to `sinks` only
   * (docs/protocol.md §8); `serviceParameters` goes into its envelope.
   */
  emitTaskUpdate(payload: TaskStatusUpdatePayload, sinks: Iterable<LogSink>, serviceParameters?: Record<string, unknown>): LogFrame;
}

/** What an operation handler registered from outside the hub (e.g. the A2A task ops) gets to work with. */
export interface OpContext {
  session: Session;
  frame: ClientEnvelope;
  principal: Principal;
  clientId: string;
  /** Cached from the first frame, replaced by UpdateServiceParameters (docs/protocol.md §3); always the current value. */
  readonly serviceParameters: Record<string, unknown> | undefined;
  /** Validates the frame's payload, or throws INVALID_REQUEST naming the first problem. */
  payload<T extends v.GenericSchema>(schema: T): v.InferOutput<T>;
  /** Sends a unicast frame on this connection, echoing `id`. */
  reply(op: string, payload: unknown, id?: string): void;
  /** Delivers a log frame addressed to this connection, in sequence order (through its Member once joined). */
  sendLog(frame: LogFrame): void;
  /** Runs once when this connection ends. */
  onClose(listener: () => void): void;
}

export type OpHandler = (ctx: OpContext) => Promise<void> | void;
