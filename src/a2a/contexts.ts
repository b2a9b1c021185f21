// Contexts are sessions (docs/a2a.md): a message without contextId starts a new terminal session,
// one with the contextId of a live session of this instance runs there; anything else is refused.
import { coversSession, type Principal } from '../auth/principal.ts';
import { BindingError } from '../protocol/errors.ts';
import type { Config } from '../core/config.ts';
import type { SessionHub } from '../hub/hub.ts';
import type { Session } from '../hub/types.ts';
import { CreateSession } from '../hub/session-record.ts';
import { createSession } from '../hub/session-creation.ts';
import type { UserMessage } from '../protocol/a2a.ts';
import type { Clock } from '../ports/clock.ts';
import type { Store } from '../ports/store.ts';
import { invalidParams, parseParams, SESSION_METADATA_KEY } from './requests.ts';

export interface ContextDeps {
  config: Config;
  store: Store;
  hub: SessionHub;
  clock: Clock;
}

/** The session a message runs in; `created` when this message started it. */
export async function contextOf(deps: ContextDeps, principal: Principal, message: UserMessage, contextId: string | undefined): Promise<{ session: Session; created: boolean }> {
  const hostFields = message.metadata?.[SESSION_METADATA_KEY];
  if (contextId !== undefined) {
    if (hostFields !== undefined) throw invalidParams(`message.metadata["${SESSION_METADATA_KEY}"] chooses the session host of a new context: it cannot apply to context ${contextId}, which already runs`, { contextId });
    return { session: await liveContext(deps, principal, contextId), created: false };
  }
  const input = parseParams(CreateSession, hostFields ?? {}, `message.metadata["${SESSION_METADATA_KEY}"]`);
  const { config, hub, store, clock } = deps;
  const rec = await createSession({ config, store, caps: hub.deps.sessionHost, clock, placement: hub.deps.placement }, principal, input, 'a2a');
  const session = await hub.session(rec.id);
  if (!session) throw new BindingError('INTERNAL', `the new session ${rec.id} could not be loaded`);
  return { session, created: true };
}

/** A running (or not yet started) session of this instance the principal may see; else invalid params naming it. */
async function liveContext({ config, store, hub }: ContextDeps, principal: Principal, contextId: string): Promise<Session> {
  // One answer for unknown, foreign and not-covered contexts: a caller learns nothing about sessions it may not see.
  const unknown = () => invalidParams(`contextId ${JSON.stringify(contextId)} is not a session of instance ${config.instanceId} this bearer may use: omit contextId to start a new one`, { contextId });
  if (!coversSession(principal, contextId) || !(await store.getSession(config.instanceId, contextId))) throw unknown();
  const session = await hub.session(contextId);
  if (!session) throw unknown();
  if (session.state === 'closed') throw invalidParams(`context ${contextId} has ended (its terminal session is closed): omit contextId to start a new one`, { contextId });
  return session;
}
