// Client payloads of the terminal verbs (docs/protocol.md §5.2) and the session-host fields (§5.4).
import * as v from 'valibot';

const Dim = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1024));
export const Role = v.picklist(['controller', 'observer'], 'role must be "controller" or "observer"');
export type Role = v.InferOutput<typeof Role>;

export const SessionHostFields = v.object({
  session_backend: v.optional(v.string()),
  backend: v.optional(v.string()),
  session_class: v.optional(v.string()),
  argv: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(65_536))), v.minLength(1, 'argv must name a program'), v.maxLength(4096))),
  command: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(65_536))),
  cwd: v.optional(v.string()),
  working_dir: v.optional(v.string()),
  env: v.optional(v.record(v.pipe(v.string(), v.regex(/^[^=\0]+$/, 'env names must not contain = or NUL')), v.string())),
  terminal_size: v.optional(v.object({ cols: Dim, rows: Dim })),
});
export type SessionHostFields = v.InferOutput<typeof SessionHostFields>;

export const JoinSession = v.object({
  ...SessionHostFields.entries,
  role: Role,
  cols: v.optional(Dim),
  rows: v.optional(Dim),
  client_label: v.optional(v.pipe(v.string(), v.maxLength(128))),
  /** With `replay_from`: replay only the newest frames that fit in this many bytes (docs/protocol.md §6.2). */
  replay_max_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER))),
  session_id: v.optional(v.string()),
});
export type JoinSession = v.InferOutput<typeof JoinSession>;

export const SessionInput = v.object({ data: v.string('data must be a base64 string'), session_id: v.optional(v.string()) });
export const SessionResize = v.object({ cols: Dim, rows: Dim, session_id: v.optional(v.string()) });
export const RequestRole = v.object({ role: Role, session_id: v.optional(v.string()) });
export const Empty = v.object({ session_id: v.optional(v.string()) });
export const Ping = v.object({ client_ts: v.optional(v.string()) });
export const UpdateServiceParameters = v.object({ service_parameters: v.record(v.string(), v.unknown()) });
