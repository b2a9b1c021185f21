// A session as the REST routes describe it (INTERFACE.md, HTTP routes): what REST clients read.
import * as v from 'valibot';
import { Member } from './server-payloads.ts';

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
  state: v.picklist(['created', 'running', 'closed']),
  created_at: v.string(),
  closed_at: v.nullable(v.string()),
  exit_code: v.nullable(v.number()),
  close_reason: v.nullable(v.string()),
  /** Only on GET of one session. */
  current_sequence: v.optional(v.number()),
  membership: v.optional(v.object({ controllers: v.array(Member), observers: v.array(Member) })),
});
export type SessionInfo = v.InferOutput<typeof SessionInfo>;

export const SessionList = v.object({ sessions: v.array(SessionInfo) });

export const RestErrorBody = v.object({ error: v.object({ code: v.string(), message: v.string() }) });
