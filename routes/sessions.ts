// REST control plane for sessions (INTERFACE.md, HTTP routes).
import { Hono, type Context } from 'hono';
import { hasScope, type Principal, type Scope } from '../src/auth/principal.ts';
import { BindingError, restError, toBindingError } from '../src/errors.ts';
import { newSessionRecord, parseCreateSession } from '../src/hub/session-record.ts';
import type { SessionRecord } from '../src/ports.ts';
import type { AppDeps } from './deps.ts';
import { attachUrl, bearerFromHeader, publicOrigins } from './request.ts';

type Env = { Variables: { principal: Principal } };

export function sessionRoutes(deps: AppDeps): Hono<Env> {
  const { config, store, hub, auth } = deps;
  const app = new Hono<Env>();

  app.use('*', async (c, next) => {
    if (c.req.param('instance_id') !== config.instanceId) return c.json(restError('not_found', `unknown instance ${c.req.param('instance_id')}`), 404);
    c.set('principal', await auth.authenticate(bearerFromHeader(c)));
    await next();
  });

  const describe = (c: Context, r: SessionRecord) => ({
    session_id: r.id,
    instance_id: r.instanceId,
    attach_url: attachUrl(publicOrigins(c).ws, r.instanceId, r.id),
    session_backend: r.backend,
    session_class: r.sessionClass,
    label: r.label,
    argv: r.argv,
    command: r.command,
    cwd: r.cwd,
    terminal_size: { cols: r.cols, rows: r.rows },
    state: r.state,
    // A running session's process cannot be vouched for while the PTY host is unreachable.
    ...(r.state === 'running' && !hub.ptyHostReachable ? { pty_host: 'unreachable' } : {}),
    created_at: r.createdAt,
    closed_at: r.closedAt,
    exit_code: r.exitCode,
    close_reason: r.closeReason,
  });

  app.post('/', async (c) => {
    requireScope(c.get('principal'), 'pty:control');
    const body = await c.req.json().catch(() => {
      throw new BindingError('INVALID_REQUEST', 'the body must be a JSON object');
    });
    const rec = newSessionRecord(
      { instanceId: config.instanceId, caps: hub.deps.sessionHost, defaultCols: config.defaultCols, defaultRows: config.defaultRows, createdBy: c.get('principal').id, now: Date.now() },
      parseCreateSession(body),
    );
    await store.createSession(rec);
    return c.json(describe(c, rec), 201);
  });

  app.get('/', async (c) => {
    requireScope(c.get('principal'), 'pty:observe');
    const list = await store.listSessions(config.instanceId);
    return c.json({ sessions: list.map((r) => describe(c, r)) });
  });

  app.get('/:session_id', async (c) => {
    requireScope(c.get('principal'), 'pty:observe');
    const rec = await store.getSession(config.instanceId, c.req.param('session_id'));
    if (!rec) return c.json(restError('not_found', `unknown session ${c.req.param('session_id')}`), 404);
    const live = await hub.session(rec.id);
    const state = live?.state ?? rec.state;
    return c.json({
      ...describe(c, { ...rec, state }),
      current_sequence: live?.currentSequence ?? (await store.lastSequence(rec.id)),
      membership: live?.membership() ?? { controllers: [], observers: [] },
    });
  });

  app.delete('/:session_id', async (c) => {
    const principal = c.get('principal');
    const rec = await store.getSession(config.instanceId, c.req.param('session_id'));
    if (!rec) return c.json(restError('not_found', `unknown session ${c.req.param('session_id')}`), 404);
    if (!hasScope(principal, 'pty:admin') && !(rec.createdBy === principal.id && hasScope(principal, 'pty:control'))) {
      throw new BindingError('PERMISSION_DENIED', 'terminating a session needs pty:admin or being its creator');
    }
    const killed = await hub.kill(rec.id);
    return c.json({ session_id: rec.id, terminated: killed, state: killed ? 'closing' : rec.state }, killed ? 202 : 200);
  });

  app.onError((e, c) => {
    const err = toBindingError(e);
    if (err.code === 'INTERNAL') hub.deps.logger.log('error', 'REST handler failed', { path: c.req.path, error: String(e) });
    const code = (err.metadata.reason as string | undefined) ?? err.code;
    return c.json(restError(code, err.message), err.info.http as 400);
  });

  return app;
}

function requireScope(p: Principal, scope: Scope): void {
  if (!hasScope(p, scope)) throw new BindingError('PERMISSION_DENIED', `this needs the ${scope} scope`);
}
