// A new session's record, validated before anything runs (REST create and the default session).
import * as v from 'valibot';
import { BindingError } from '../protocol/errors.ts';
import { uuidv7 } from '../core/ids.ts';
import { describeIssue } from '../protocol/envelope.ts';
import { SessionHostFields } from '../protocol/pty-payloads.ts';
import { HostName } from '../protocol/host-info.ts';
import type { SessionRecord } from '../ports/store.ts';
import { askedHost } from './join-spec.ts';
import { checkSessionEnv, selectBackend, type SessionHostCaps } from './session-host.ts';

export const CreateSession = v.object({
  ...SessionHostFields.entries,
  label: v.optional(v.pipe(v.string(), v.maxLength(128))),
  /** The remote PTY host to run it on (docs/remote-hosts.md); absent: the local host. */
  host: v.optional(HostName),
});
export type CreateSession = v.InferOutput<typeof CreateSession>;

export function parseCreateSession(body: unknown): CreateSession {
  const r = v.safeParse(CreateSession, body ?? {});
  if (!r.success) throw new BindingError('INVALID_REQUEST', describeIssue(r.issues[0]));
  return r.output;
}

export function newSessionRecord(
  o: { instanceId: string; caps: SessionHostCaps; defaultCols: number; defaultRows: number; createdBy: string | null; now: number },
  input: CreateSession,
): SessionRecord {
  const asked = askedHost(input);
  const { backend, sessionClass } = selectBackend(o.caps, asked.backend, asked.sessionClass);
  checkSessionEnv(o.caps, input.env);
  return {
    id: uuidv7(o.now),
    instanceId: o.instanceId,
    backend,
    sessionClass,
    argv: input.argv ?? null,
    command: input.command ?? null,
    cwd: input.cwd || input.working_dir || null,
    env: input.env ?? {},
    cols: input.terminal_size?.cols ?? o.defaultCols,
    rows: input.terminal_size?.rows ?? o.defaultRows,
    label: input.label ?? null,
    state: 'created',
    createdAt: new Date(o.now).toISOString(),
    closedAt: null,
    exitCode: null,
    closeReason: null,
    createdBy: o.createdBy,
    hadMember: false,
    createdVia: null,
    host: input.host ?? null,
  };
}
