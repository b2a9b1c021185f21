// REST control plane for sessions (docs/protocol.md §10); every body is typed by its schema in src/protocol/session-info.ts.
import { Hono, type Context } from 'hono';
import { coversSession, hasScope, mayEndSession, type Principal, type Scope } from '../src/auth/principal.ts';
import { BindingError, restError } from '../src/protocol/errors.ts';
import { restFaultHandler } from './rest-fault.ts';
import { parseCreateSession } from '../src/hub/session-record.ts';
import { createSession } from '../src/hub/session-creation.ts';
import { recordingResponse } from './recording.ts';
import { shareRoutes } from './shares.ts';
import { fileRoutes } from './files.ts';
import type { SessionRecord } from '../src/ports/store.ts';
import type { SessionInfo, SessionList, SessionTerminated } from '../src/protocol/session-info.ts';
import type { AppDeps } from './deps.ts';
import { requestIsSecure, requireSecureTransport } from './guards.ts';
import { bearerFromHeader, publicOrigins, restJsonBody } from './request.ts';
import { onUnlinkedHost, sessionInfo } from './session-view.ts';

type Env = { Variables: { principal: Principal } };

export function sessionRoutes(deps: AppDeps): Hono<Env> {
  const { config, store, hub, auth } = deps;
  const app = new Hono<Env>();
  app.use('*', async (c, next) => {
    requireSecureTransport(c, config);
    const principal = await auth.authenticate(bearerFromHeader(c), deps.clientCertificate?.(c));
    if (c.req.param('instance_id') !== config.instanceId) return c.json(restError('not_found', `unknown instance ${c.req.param('instance_id')}`), 404);
    requireScope(principal, 'pty:observe');
    c.set('principal', principal);
    await next();
  });

  // A running session's process cannot be vouched for while the PTY host is unreachable.
  const describe = (c: Context, r: SessionRecord): SessionInfo =>
    sessionInfo(r, publicOrigins(c, config, deps.localPort(c), requestIsSecure(c, config)).ws, r.state === 'running' && !hub.ptyHostReachable, onUnlinkedHost(r, (h) => deps.hosts.placed.linked(h)));

  /** The session if it exists; throws PERMISSION_DENIED (403) when this principal may not see it. */
  const visibleSession = async (c: Context<Env>): Promise<SessionRecord | undefined> => {
    const id = c.req.param('session_id') ?? '';
    if (!coversSession(c.get('principal'), id)) throw new BindingError('PERMISSION_DENIED', `this bearer does not cover session ${id}`);
    return store.getSession(config.instanceId, id);
  };
  const notFound = (c: Context) => c.json(restError('not_found', `unknown session ${c.req.param('session_id')}`), 404);

  app.post('/', async (c) => {
    const principal = c.get('principal');
    requireScope(principal, 'pty:control');
    const input = parseCreateSession(await restJsonBody(c));
    const rec = await createSession({ config, store, caps: hub.deps.sessionHost, clock: hub.deps.clock, placement: hub.deps.placement }, principal, input, 'rest');
    return c.json(describe(c, rec), 201);
  });

  app.get('/', async (c) => {
    const principal = c.get('principal');
    const list = (await store.listSessions(config.instanceId)).filter((r) => coversSession(principal, r.id));
    return c.json({ sessions: list.map((r) => describe(c, r)) } satisfies SessionList);
  });

  app.get('/:session_id', async (c) => {
    const rec = await visibleSession(c);
    if (!rec) return notFound(c);
    // A live session's own record: the stored one can lag it (a session that just ended may not
    // have its exit code stored yet), and a client that saw Closed expects to read it here.
    const live = await hub.session(rec.id);
    return c.json({
      ...describe(c, live?.latestRecord ?? rec),
      current_sequence: live?.currentSequence ?? (await store.lastSequence(rec.id)),
      skipped_sequences: live?.skippedSequences ?? (await store.sequenceState(rec.id)).skipped,
      membership: live?.membership() ?? { controllers: [], observers: [] },
    } satisfies SessionInfo);
  });

  // Scoped like replay: the same scope and session lookup as reading the session.
  app.get('/:session_id/recording.cast', async (c) => {
    requireScope(c.get('principal'), 'pty:observe');
    const rec = await visibleSession(c);
    if (!rec) return notFound(c);
    return recordingResponse(store, rec, hub.deps.logger);
  });

  app.delete('/:session_id', async (c) => {
    const principal = c.get('principal');
    const rec = await visibleSession(c);
    if (!rec) return notFound(c);
    if (!mayEndSession(principal, rec.createdBy)) {
      throw new BindingError('PERMISSION_DENIED', 'terminating a session needs pty:admin, or pty:control and being its creator (or the dev token)');
    }
    const outcome = await hub.kill(rec.id);
    // 202 while a process is being signalled; 200 when it is over (never started, or already ended).
    const body: SessionTerminated = { session_id: rec.id, terminated: outcome !== null, state: outcome ?? rec.state };
    return c.json(body, outcome === 'closing' ? 202 : 200);
  });

  app.route('/:session_id/shares', shareRoutes(deps));
  app.route('/:session_id/files', fileRoutes(deps));

  app.onError(restFaultHandler(hub.deps.logger, 'REST handler failed'));

  return app;
}

function requireScope(p: Principal, scope: Scope): void {
  if (!hasScope(p, scope)) throw new BindingError('PERMISSION_DENIED', `this needs the ${scope} scope`);
}
