// A session as the REST routes describe it (docs/protocol.md §10): what the routes send and REST clients read.
import * as v from 'valibot';
import { MembershipLists } from './server-payloads.ts';

export const SessionInfo = v.object({
  session_id: v.string(),
  instance_id: v.string(),
  attach_url: v.string(),
  session_backend: v.string(),
  session_class: v.string(),
  label: v.nullable(v.string()),
  argv: v.nullable(v.array(v.string())),
  command: v.nullable(v.string()),
  cwd: v.nullable(v.string()),
  terminal_size: v.object({ cols: v.number(), rows: v.number() }),
  /** `host_unreachable`: running on a remote host whose link is down (docs/remote-hosts.md). */
  state: v.picklist(['created', 'running', 'host_unreachable', 'closed']),
  /** On a running session while the PTY host is unreachable: its process cannot be vouched for. */
  pty_host: v.optional(v.literal('unreachable')),
  /** The remote PTY host it was placed on (docs/remote-hosts.md); absent: the router's local host. */
  host: v.optional(v.string()),
  created_at: v.string(),
  closed_at: v.nullable(v.string()),
  exit_code: v.nullable(v.number()),
  close_reason: v.nullable(v.string()),
  /** The server's default session of some start (src/hub/default-session.ts); absent on every other. */
  default_session: v.optional(v.literal(true)),
  /** Only on GET of one session. */
  current_sequence: v.optional(v.number()),
  /** Only on GET of one session: sequence numbers skipped after crashes (docs/protocol.md §3.4). */
  skipped_sequences: v.optional(v.number()),
  membership: v.optional(MembershipLists),
});
export type SessionInfo = v.InferOutput<typeof SessionInfo>;

export const SessionList = v.object({ sessions: v.array(SessionInfo) });
export type SessionList = v.InferOutput<typeof SessionList>;

/** DELETE of a session: whether a process was told to end, and the state it is in meanwhile. */
export const SessionTerminated = v.object({ session_id: v.string(), terminated: v.boolean(), state: v.picklist(['created', 'running', 'closed', 'closing']) });
export type SessionTerminated = v.InferOutput<typeof SessionTerminated>;

export const RestErrorBody = v.object({ error: v.object({ code: v.string(), message: v.string() }) });
