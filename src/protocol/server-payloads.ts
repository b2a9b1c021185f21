// Server frames (docs/protocol.md §3–§8): one schema per shape. The client library validates what it
// acts on with them, and the server's frame builders (frames.ts) take their types, so a field added
// on one side and not the other fails the typecheck.
import * as v from 'valibot';
import type { Task, TaskStatusUpdateEvent } from './a2a.ts';

const seq = v.pipe(v.number(), v.integer(), v.minValue(0));
const dim = v.pipe(v.number(), v.integer(), v.minValue(1));

export const ServerEnvelope = v.object({
  op: v.string(),
  id: v.string(),
  ts: v.string(),
  sequence: seq,
  payload: v.record(v.string(), v.unknown()),
});
export type ServerEnvelope = v.InferOutput<typeof ServerEnvelope>;

/**
 * `kind: "agent"` (an extension of pty-extensions-v1 §MembershipChanged, docs/protocol.md): a client with a
 * task queued or running in the session, joined or not (an A2A caller never joins); `activity`
 * says what it is doing or waiting for, e.g. "waiting for a human to finish their line".
 */
export const Member = v.object({ client_id: v.string(), label: v.optional(v.string()), kind: v.optional(v.literal('agent')), activity: v.optional(v.string()) });
export type Member = v.InferOutput<typeof Member>;

export const OutputPayload = v.object({ kind: v.literal('Output'), stream: v.optional(v.string()), data: v.string() });
export const ResizePayload = v.object({ kind: v.literal('Resize'), cols: dim, rows: dim });
export const RoleAssignedPayload = v.object({
  kind: v.literal('RoleAssigned'),
  role: v.picklist(['controller', 'observer']),
  client_id: v.string(),
  downgraded: v.optional(v.boolean()),
  reason: v.optional(v.string()),
  /** The join's process-start fields that did not apply: the session's program had started (docs/protocol.md §5.4). */
  ignored_fields: v.optional(v.array(v.string())),
});
export const MembershipLists = v.object({ controllers: v.array(Member), observers: v.array(Member) });
export type MembershipLists = v.InferOutput<typeof MembershipLists>;
export const MembershipPayload = v.object({ kind: v.literal('MembershipChanged'), ...MembershipLists.entries });
export const KeyframePayload = v.object({
  kind: v.literal('Keyframe'),
  snapshot: v.string(),
  snapshot_format: v.string(),
  snapshot_cols: dim,
  snapshot_rows: dim,
  anchor_sequence: seq,
});
/** Why a session ended (docs/protocol.md §5, Closed). */
export const CloseReason = v.picklist(['normal', 'killed', 'timeout', 'instance_terminated', 'error']);
export type CloseReason = v.InferOutput<typeof CloseReason>;
export const ClosedPayload = v.object({
  kind: v.literal('Closed'),
  exit_code: v.nullable(v.number()),
  reason: CloseReason,
  detail: v.optional(v.string()),
});
export const PtyErrorPayload = v.object({ kind: v.literal('Error'), code: v.string(), message: v.optional(v.string()) });

export const PtyFramePayload = v.variant('kind', [OutputPayload, ResizePayload, RoleAssignedPayload, MembershipPayload, KeyframePayload, ClosedPayload, PtyErrorPayload]);
export type PtyFramePayload = v.InferOutput<typeof PtyFramePayload>;
export type OutputPayload = v.InferOutput<typeof OutputPayload>;
export type ResizePayload = v.InferOutput<typeof ResizePayload>;
export type RoleAssignedPayload = v.InferOutput<typeof RoleAssignedPayload>;
export type MembershipPayload = v.InferOutput<typeof MembershipPayload>;
export type KeyframePayload = v.InferOutput<typeof KeyframePayload>;
export type ClosedPayload = v.InferOutput<typeof ClosedPayload>;
export type PtyErrorPayload = v.InferOutput<typeof PtyErrorPayload>;
/** The kinds of `pty.session_frame`. */
export type PtyFrameKind = PtyFramePayload['kind'];

/** The binding's `Error` frame payload (docs/protocol.md §7); REPLAY_OUT_OF_RANGE adds the retained bounds. */
export const ErrorFramePayload = v.object({
  code: v.string(),
  message: v.string(),
  retryable: v.optional(v.boolean()),
  a2a_error: v.optional(v.unknown()),
  /** Set by some errors for the client's program (e.g. `session_backend.not_implemented`). */
  reason: v.optional(v.string()),
  oldest_retained_sequence: v.optional(v.nullable(seq)),
  current_sequence: v.optional(seq),
  /** Log frames lost for good (docs/protocol.md §6.2, §7.3): the screen is repainted by the next Keyframe. */
  first_lost_sequence: v.optional(seq),
  last_lost_sequence: v.optional(seq),
});
export type ErrorFramePayload = v.InferOutput<typeof ErrorFramePayload>;

/** What the server can run (docs/protocol.md §4): exactly the backends its PTY host reported. */
export const SessionHostOffer = v.object({
  supported_backends: v.array(v.string()),
  default_backend: v.string(),
  supported_classes: v.array(v.string()),
  default_class: v.optional(v.string()),
  observe_supported: v.boolean(),
  drive_supported: v.boolean(),
  reattach_supported: v.boolean(),
});
export type SessionHostOffer = v.InferOutput<typeof SessionHostOffer>;

export const HelloPayload = v.object({
  binding_uri: v.string(),
  binding_version: v.string(),
  supported_operations: v.array(v.string()),
  activated_extensions: v.array(v.string()),
  session: v.object({ session_id: v.string(), current_sequence: seq }),
  session_host: v.optional(SessionHostOffer),
  payload_mode: v.optional(v.object({ binary: v.boolean(), binary_subprotocol: v.optional(v.string()), json_subprotocol: v.optional(v.string()) })),
});
export type HelloPayload = v.InferOutput<typeof HelloPayload>;

export const GoodbyePayload = v.object({ reason: v.string() });
export type GoodbyePayload = v.InferOutput<typeof GoodbyePayload>;

export const PongPayload = v.object({ client_ts: v.nullable(v.string()), server_ts: v.string() });
export type PongPayload = v.InferOutput<typeof PongPayload>;

const isRecord = (x: unknown): boolean => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A task's state change (docs/protocol.md §8): the task as it is now, and what changed. */
export const TaskStatusUpdatePayload = v.object({
  task: v.custom<Task>(isRecord),
  delta: v.object({
    taskId: v.string(),
    contextId: v.string(),
    status: v.custom<TaskStatusUpdateEvent['status']>(isRecord),
    metadata: v.optional(v.record(v.string(), v.unknown())),
  }),
});
export type TaskStatusUpdatePayload = v.InferOutput<typeof TaskStatusUpdatePayload>;
