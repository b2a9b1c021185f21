// REST for share links (docs/sharing.md): mint, list, revoke. Mounted under a session's route, so
// the bearer is already authenticated (the principal is in the context); each needs pty:control
// on that session. Apart: revoking every share a principal minted on this instance.
import { Hono, type Context } from 'hono';
import { coversSession, hasScope, type Principal } from '../src/auth/principal.ts';
import { BindingError, restError } from '../src/protocol/errors.ts';
import { restFaultHandler } from './rest-fault.ts';
import type { ShareRecord } from '../src/ports/share-store.ts';
import type { MintedShare, ShareInfo, SharesRevoked } from '../src/protocol/share-info.ts';
import type { AppDeps } from './deps.ts';
import { requestIsSecure, requireSecureTransport } from './guards.ts';
import { bearerFromHeader, publicOrigins, restJsonBody } from './request.ts';

type Env = { Variables: { principal: Principal } };

/** The web page's URL for a share: the token in the fragment, never the query (docs/sharing.md). */
export function shareUrl(httpOrigin: string, instanceId: string, sessionId: string, token: string, scope: ShareRecord['scope']): string {
  // The instance too: a client handed only this link (`pty-ws attach '<url>'`) finds the session by it.
  const fragment = new URLSearchParams({ token, session: sessionId, instance: instanceId });
  if (scope === 'pty:observe') fragment.set('observe', '1');
  return `${httpOrigin}/#${fragment.toString()}`;
}

export function shareRoutes(deps: AppDeps): Hono<Env> {
  const { config, store, shares } = deps;
  const app = new Hono<Env>();

  /** The session id once the caller may manage its shares; 404 for no such session. */
  const controlledSession = async (c: Context<Env>): Promise<string | null> => {
    const principal = c.get('principal');
    const id = c.req.param('session_id') ?? '';
    if (!coversSession(principal, id)) throw new BindingError('PERMISSION_DENIED', `this bearer does not cover session ${id}`);
    if (!hasScope(principal, 'pty:control')) throw new BindingError('PERMISSION_DENIED', 'share links need pty:control on the session');
    return (await store.getSession(config.instanceId, id)) ? id : null;
  };
  const notFound = (c: Context) => c.json(restError('not_found', `unknown session ${c.req.param('session_id')}`), 404);
  const describe = (s: ShareRecord): ShareInfo => ({ share_id: s.id, scope: s.scope, label: s.label, created_by: s.createdBy, created_at: s.createdAt, expires_at: s.expiresAt });

  app.post('/', async (c) => {
    const sessionId = await controlledSession(c);
    if (!sessionId) return notFound(c);
    const body = await restJsonBody(c);
    const { share, token } = await shares.mint(c.get('principal'), sessionId, body);
    deps.hub.deps.logger.log('info', 'audit.share_minted', { principal: c.get('principal').id, session: sessionId, share_id: share.id, scope: share.scope, expires_at: share.expiresAt });
    const url = shareUrl(publicOrigins(c, config, deps.localPort(c), requestIsSecure(c, config)).http, config.instanceId, sessionId, token, share.scope);
    const minted: MintedShare = { ...describe(share), token, url, session_id: sessionId };
    return c.json(minted, 201);
  });

  app.get('/', async (c) => {
    const sessionId = await controlledSession(c);
    if (!sessionId) return notFound(c);
    return c.json({ shares: (await shares.list(sessionId)).map(describe) });
  });

  app.delete('/:share_id', async (c) => {
    const sessionId = await controlledSession(c);
    if (!sessionId) return notFound(c);
    const shareId = c.req.param('share_id');
    if (!(await shares.revoke(sessionId, shareId))) return c.json(restError('not_found', `no active share ${shareId} on session ${sessionId}`), 404);
    deps.hub.deps.logger.log('info', 'audit.share_revoked', { principal: c.get('principal').id, session: sessionId, share_id: shareId });
    return c.body(null, 204);
  });

  return app;
}

/**
 * `DELETE /agents/{instance_id}/shares[?principal=P]`: revokes every active share of this instance
 * the caller minted, or with `pty:admin` over every session those P minted (a leaked or departed
 * principal's links, whatever credential it used); the shares minted with them go too. `200 {revoked}`.
 */
export function principalShareRoutes(deps: AppDeps): Hono {
  const { config, shares, auth } = deps;
  const app = new Hono();
  app.delete('/', async (c) => {
    requireSecureTransport(c, config);
    const principal = await auth.authenticate(bearerFromHeader(c), deps.clientCertificate?.(c));
    if (c.req.param('instance_id') !== config.instanceId) return c.json(restError('not_found', `unknown instance ${c.req.param('instance_id')}`), 404);
    const of = c.req.query('principal') ?? principal.id;
    if (of === '') throw new BindingError('INVALID_REQUEST', 'principal must name a principal');
    if (of !== principal.id && !(hasScope(principal, 'pty:admin') && principal.sessions === undefined)) {
      throw new BindingError('PERMISSION_DENIED', "revoking another principal's shares needs pty:admin over every session");
    }
    const revoked = await shares.revokeAllBy(of);
    deps.hub.deps.logger.log('info', 'audit.shares_revoked', { principal: principal.id, minted_by: of, shares: revoked });
    return c.json({ revoked } satisfies SharesRevoked);
  });
  app.onError(restFaultHandler(deps.hub.deps.logger, 'share revocation failed'));
  return app;
}
