// The one way a principal makes a session: REST `POST …/sessions`, and an A2A message without a
// contextId on either standard binding (the fleet agent runs those on the instance serving it).
// PTY_WS_MAX_SESSIONS_PER_PRINCIPAL is counted and the record stored in one database transaction
// (docs/security.md, "Sessions per principal"), so no path and no concurrency gets past it.
import type { Principal } from '../auth/principal.ts';
import type { Config } from '../core/config.ts';
import { BindingError } from '../protocol/errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { SessionRecord, Store } from '../ports/store.ts';
import { newSessionRecord, type CreateSession } from './session-record.ts';
import type { SessionHostCaps } from './session-host.ts';

export interface SessionCreationDeps {
  config: Pick<Config, 'instanceId' | 'defaultCols' | 'defaultRows' | 'maxSessionsPerPrincipal'>;
  store: Pick<Store, 'createSessionWithin'>;
  caps: SessionHostCaps;
  clock: Clock;
  /** Checks a remote host named by `host` may take it, on that backend (HubDeps.placement). */
  placement?: (host: string, backend: string) => Promise<void>;
}

/**
 * Stores a new session of `principal` (not started: its program starts with the first join or
 * task), marked with the route that made it (`a2a` contexts end when idle: src/a2a/idle-contexts.ts).
 * Throws PERMISSION_DENIED for a bearer restricted to particular sessions, INVALID_REQUEST or
 * UNSUPPORTED_OPERATION for a host this instance cannot give, RATE_LIMITED past the cap.
 */
export async function createSession(deps: SessionCreationDeps, principal: Principal, input: CreateSession, via: 'rest' | 'a2a'): Promise<SessionRecord> {
  const { config } = deps;
  if (principal.sessions) throw new BindingError('PERMISSION_DENIED', 'a bearer restricted to particular sessions cannot create sessions: use one it covers');
  const rec: SessionRecord = {
    ...newSessionRecord(
      { instanceId: config.instanceId, caps: deps.caps, defaultCols: config.defaultCols, defaultRows: config.defaultRows, createdBy: principal.id, now: deps.clock.now() },
      input,
    ),
    createdVia: via,
  };
  if (input.host !== undefined) {
    if (!deps.placement) throw new BindingError('INVALID_REQUEST', `this router takes no remote PTY hosts: no host ${input.host}`, { metadata: { reason: 'host_unknown' } });
    await deps.placement(input.host, rec.backend);
  }
  const limit = config.maxSessionsPerPrincipal;
  if (!(await deps.store.createSessionWithin({ ...rec, createdBy: principal.id }, limit))) {
    throw new BindingError('RATE_LIMITED', `principal ${principal.id} already has ${limit} sessions that have not ended (PTY_WS_MAX_SESSIONS_PER_PRINCIPAL=${limit}): end some first`);
  }
  return rec;
}
