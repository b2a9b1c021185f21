// The binding's frame envelope (docs/protocol.md §2): one JSON object per TEXT frame.
import * as v from 'valibot';
import { A2A_ERRORS, BindingError } from './errors.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export const ClientEnvelope = v.object({
  op: v.pipe(v.string(), v.minLength(1, 'op must be a non-empty string')),
  id: v.pipe(v.string('id must be a string'), v.minLength(1, 'id must be non-empty'), v.maxLength(128, 'id must be at most 128 characters')),
  ts: v.pipe(v.string('ts must be an RFC 3339 timestamp string'), v.regex(RFC3339, 'ts must be an RFC 3339 timestamp (e.g. 2026-05-09T14:30:00.000Z)')),
  sequence: v.optional(v.never('sequence is server-only: clients must not set it')),
  replay_from: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0)))),
  service_parameters: v.optional(v.record(v.string(), v.unknown())),
  extensions: v.optional(v.array(v.string())),
  payload: v.record(v.string(), v.unknown(), 'payload must be a JSON object'),
});
export type ClientEnvelope = v.InferOutput<typeof ClientEnvelope>;

/** Every server frame: `sequence` is always present (docs/protocol.md §3). */
export interface ServerFrame<P = unknown> {
  op: string;
  id: string;
  ts: string;
  sequence: number;
  payload: P;
}

/**
 * Parses and validates one client TEXT frame. The request id is recovered whenever the text is a
 * JSON object with a string id, so an Error can echo it even when the rest is invalid.
 */
export function decodeClientFrame(text: string): { ok: true; frame: ClientEnvelope } | { ok: false; id: string | null; error: BindingError } {
  let raw: unknown;
  if (nestsDeeperThan(text)) return { ok: false, id: null, error: new BindingError('INVALID_REQUEST', `frame nests deeper than ${MAX_JSON_DEPTH} levels`) };
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, id: null, error: new BindingError('INVALID_REQUEST', 'frame is not valid JSON') };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, id: null, error: new BindingError('INVALID_REQUEST', 'frame must be a single JSON object') };
  }
  const maybeId = (raw as { id?: unknown }).id;
  const id = typeof maybeId === 'string' && maybeId.length > 0 && maybeId.length <= 128 ? maybeId : null;
  // valibot's record() accepts an array; the envelope's payload is an object.
  if (Array.isArray((raw as { payload?: unknown }).payload)) return { ok: false, id, error: new BindingError('INVALID_REQUEST', 'payload must be a JSON object') };
  const r = v.safeParse(ClientEnvelope, raw);
  if (!r.success) return { ok: false, id, error: new BindingError('INVALID_REQUEST', describeIssue(r.issues[0])) };
  return { ok: true, frame: r.output };
}

/** The frame's payload checked against its op's schema, or INVALID_REQUEST naming the first problem. */
export function parsePayload<T extends v.GenericSchema>(schema: T, f: ClientEnvelope): v.InferOutput<T> {
  const r = v.safeParse(schema, f.payload);
  if (r.success) return r.output;
  const issue = r.issues[0];
  // A key a strict payload does not know: the request is well formed, its params are not (A2A's invalid params).
  const unknownKey = issue.type === 'strict_object' && issue.expected === 'never';
  throw new BindingError('INVALID_REQUEST', `${f.op}: ${describeIssue(issue)}`, unknownKey ? { a2a: A2A_ERRORS.invalidParams } : {});
}

/** "payload.rows: ..." — the first issue with its path, readable by a client author. */
export function describeIssue(issue: v.BaseIssue<unknown>): string {
  const path = issue.path?.map((p) => String(p.key)).join('.');
  const msg = issue.message;
  if (issue.received === 'undefined' && issue.kind === 'schema' && path) return `${path} is required`;
  return path ? `${path}: ${msg}` : msg;
}
