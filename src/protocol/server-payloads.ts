// Server frames as a client reads them (pty-ws-v1 §3, §5; pty-extensions/v1 §5): one schema per shape,
// so the client library validates what it acts on and its types come from here.
import * as v from 'valibot';

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

export const Member = v.object({ client_id: v.string(), label: v.optional(v.string()) });
export type Member = v.InferOutput<typeof Member>;

export const OutputPayload = v.object({ kind: v.literal('Output'), stream: v.optional(v.string()), data: v.string() });
export const ResizePayload = v.object({ kind: v.literal('Resize'), cols: dim, rows: dim });
export const RoleAssignedPayload = v.object({
  kind: v.literal('RoleAssigned'),
  role: v.picklist(['controller', 'observer']),
  client_id: v.string(),
  downgraded: v.optional(v.boolean()),
  reason: v.optional(v.string()),
});
export const MembershipPayload = v.object({ kind: v.literal('MembershipChanged'), controllers: v.array(Member), observers: v.array(Member) });
export const KeyframePayload = v.object({
  kind: v.literal('Keyframe'),
  snapshot: v.string(),
  snapshot_format: v.string(),
  snapshot_cols: dim,
  snapshot_rows: dim,
  anchor_sequence: seq,
});
export const ClosedPayload = v.object({
  kind: v.literal('Closed'),
  exit_code: v.nullable(v.number()),
  reason: v.string(),
  detail: v.optional(v.string()),
});
export const PtyErrorPayload = v.object({ kind: v.literal('Error'), code: v.string(), message: v.optional(v.string()) });

export const PtyFramePayload = v.variant('kind', [OutputPayload, ResizePayload, RoleAssignedPayload, MembershipPayload, KeyframePayload, ClosedPayload, PtyErrorPayload]);
export type PtyFramePayload = v.InferOutput<typeof PtyFramePayload>;

/** The binding's `Error` frame payload (pty-ws-v1 §6); REPLAY_OUT_OF_RANGE adds the retained bounds. */
export const ErrorFramePayload = v.object({
  code: v.string(),
  message: v.string(),
  retryable: v.optional(v.boolean()),
  a2a_error: v.optional(v.unknown()),
  oldest_retained_sequence: v.optional(v.nullable(seq)),
  current_sequence: v.optional(seq),
});
export type ErrorFramePayload = v.InferOutput<typeof ErrorFramePayload>;

export const HelloPayload = v.object({
  binding_uri: v.string(),
  binding_version: v.string(),
  supported_operations: v.array(v.string()),
  activated_extensions: v.array(v.string()),
  session: v.object({ session_id: v.string(), current_sequence: seq }),
  session_host: v.optional(v.unknown()),
  payload_mode: v.optional(v.object({ binary: v.boolean() })),
});
export type HelloPayload = v.InferOutput<typeof HelloPayload>;

export const GoodbyePayload = v.object({ reason: v.string() });
