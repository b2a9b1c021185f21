// Remote PTY hosts (docs/remote-hosts.md): list them, mint and revoke their credentials, and the
// link a host dials in on. The link is the host protocol's bytes as binary WebSocket messages.
import { Hono, type Context } from 'hono';
import type { WSContext } from 'hono/ws';
import * as v from 'valibot';
import { hasScope, type Principal, type Scope } from '../src/auth/principal.ts';
import { BindingError, restError, toBindingError } from '../src/protocol/errors.ts';
import { peerFields } from '../src/hub/audit.ts';
import { offeredProtocols } from '../src/protocol/subprotocol.ts';
import { HOST_SCOPE, HOST_SUBPROTOCOL, HostName, type HostInfo, type MintedHostToken } from '../src/protocol/host-info.ts';
import { WsHostSocket } from '../src/host-link/ws-host-socket.ts';
import { PtyHostConnection } from '../src/host-link/client.ts';
import type { AppDeps } from './deps.ts';
import { peerOf } from './edge.ts';
import { requireSecureTransport } from './guards.ts';
import { bearerFromHeader } from './request.ts';

type Env = { Variables: { principal: Principal } };

/** Close code of a link whose credential was revoked: the host's UNAUTHENTICATED (DECISIONS §15). */
const REVOKED_CLOSE = 4401;

export function hostRoutes(deps: AppDeps): Hono<Env> {
  const { config, auth, hosts } = deps;
  const logger = deps.hub.deps.logger;
  const app = new Hono<Env>();

  const hostName = (c: Context): string => {
    const r = v.safeParse(HostName, c.req.param('name'));
    if (!r.success) throw new BindingError('INVALID_REQUEST', r.issues[0].message);
    return r.output;
  };

  // The link authenticates with a host credential, not as a user (below).
  app.get('/:name/link', linkHandler(deps, hostName));

  app.use('*', async (c, next) => {
    requireSecureTransport(c, config);
    const principal = await auth.authenticate(bearerFromHeader(c), deps.clientCertificate?.(c));
    if (c.req.param('instance_id') !== config.instanceId) return c.json(restError('not_found', `unknown instance ${c.req.param('instance_id')}`), 404);
    c.set('principal', principal);
    await next();
  });

  app.get('/', async (c) => {
    requireScope(c.get('principal'), 'pty:observe');
    const list: HostInfo[] = (await hosts.credentials.list()).map(({ name }) => {
      const linked = hosts.placed.linked(name);
      return { name, connected: linked !== undefined, since: linked ? new Date(linked.since).toISOString() : null, backends: [...(linked?.backends ?? [])], sessions: hosts.placed.sessionsOn(name) };
    });
    return c.json({ hosts: list });
  });

  app.post('/:name/token', async (c) => {
    const principal = c.get('principal');
    requireAdmin(principal);
    const name = hostName(c);
    const token = await hosts.credentials.mint(name, principal.id);
    logger.log('info', 'audit.host_token_minted', { principal: principal.id, host: name });
    return c.json({ name, scope: HOST_SCOPE, token } satisfies MintedHostToken, 201);
  });

  app.delete('/:name', async (c) => {
    const principal = c.get('principal');
    requireAdmin(principal);
    const name = hostName(c);
    if (!(await hosts.credentials.revoke(name))) return c.json(restError('not_found', `no host ${name}`), 404);
    const linkEnded = hosts.placed.drop(name, REVOKED_CLOSE, 'host credential revoked');
    logger.log('info', 'audit.host_revoked', { principal: principal.id, host: name, link_ended: linkEnded });
    return c.json({ name, revoked: true, link_ended: linkEnded });
  });

  app.onError((e, c) => {
    const err = toBindingError(e);
    if (err.code === 'INTERNAL') logger.log('error', 'REST handler failed', { path: c.req.path, error: String(e) });
    return c.json(restError((err.metadata.reason as string | undefined) ?? err.code, err.message), err.httpStatus as 400);
  });
  return app;
}

/**
 * The upgrade a PTY host dials in on. Refused before it, as HTTP: no upgrade (426), no host
 * subprotocol (400), a user credential (403) or none that authenticates (401), another host's
 * credential (403), an unknown instance (404), a name already linked (409).
 */
function linkHandler(deps: AppDeps, hostName: (c: Context) => string) {
  const { config, auth, hosts } = deps;
  const logger = deps.hub.deps.logger;
  return async (c: Context) => {
    const peer = peerOf(c, deps);
    let claimed: string | undefined;
    try {
      if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') return c.json(restError('upgrade_required', 'this endpoint only accepts a WebSocket upgrade'), 426);
      requireSecureTransport(c, config);
      if (!offeredProtocols(c.req.header('sec-websocket-protocol'))?.includes(HOST_SUBPROTOCOL)) throw new BindingError('INVALID_REQUEST', `a host link must offer the subprotocol ${HOST_SUBPROTOCOL}`);
      const name = hostName(c);
      const bearer = bearerFromHeader(c);
      const rec = await hosts.credentials.hostOf(bearer).catch(async (e: unknown) => {
        // A bearer that authenticates as a user is a valid principal without the host's scope.
        const user = bearer === null ? null : await auth.authenticate(bearer, deps.clientCertificate?.(c)).catch(() => null);
        if (user && auth.enforced) throw new BindingError('PERMISSION_DENIED', `a user credential registers no host: link with the host credential of ${name} (pty-ws token --host ${name})`);
        throw e;
      });
      if (rec.name !== name) throw new BindingError('PERMISSION_DENIED', `this host credential is ${rec.name}'s, not ${name}'s`);
      if (c.req.param('instance_id') !== config.instanceId) return c.json(restError('not_found', `unknown instance ${c.req.param('instance_id')}`), 404);
      if (!hosts.placed.claim(name)) {
        logger.log('warn', 'host link refused: the name is linked already', { host: name, ...peerFields(peer) });
        return c.json(restError('host_already_linked', `host ${name} is linked already: one live link per name`), 409);
      }
      claimed = name;
      let socket: WsHostSocket | undefined;
      return await deps.upgradeWebSocket(c, {
        onOpen: (_evt: Event, ws: WSContext) => {
          const link = new WsHostSocket(ws);
          socket = link;
          const host = new PtyHostConnection(link, { logger: logger.child({ host: name }) });
          PtyHostConnection.greet(host, `the link of host ${name}`).then(
            () => hosts.placed.link({ name, host, drop: (code, reason) => ws.close(code, reason) }),
            (e: unknown) => {
              hosts.placed.release(name);
              logger.log('warn', 'host link dropped: no greeting', { host: name, error: String(e) });
              ws.close(4400, 'no host greeting');
            },
          );
          logger.log('info', 'audit.host_link', { host: name, ...peerFields(peer) });
        },
        onMessage: (evt: MessageEvent) => {
          const data: unknown = evt.data;
          const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
          if (bytes) socket?.received(bytes);
        },
        onClose: () => {
          hosts.placed.release(name);
          socket?.ended();
        },
        onError: () => {
          hosts.placed.release(name);
          socket?.ended(new Error('host link error'));
        },
      });
    } catch (e) {
      if (claimed !== undefined) hosts.placed.release(claimed);
      const err = toBindingError(e);
      logger.log(err.code === 'INTERNAL' ? 'error' : 'warn', 'audit.host_link_refused', { host: c.req.param('name'), status: err.info.http, code: err.code, message: err.message, ...peerFields(peer) });
      return c.json(restError((err.metadata.reason as string | undefined) ?? err.code, err.message), err.info.http as 400);
    }
  };
}

/** `pty:admin`, or the local operator (the dev token of `pty-ws start`), who runs this router and its hosts. */
function requireAdmin(p: Principal): void {
  if (!hasScope(p, 'pty:admin') && p.operator !== true) throw new BindingError('PERMISSION_DENIED', 'host credentials need pty:admin (or the dev token)');
}

function requireScope(p: Principal, scope: Scope): void {
  if (!hasScope(p, scope)) throw new BindingError('PERMISSION_DENIED', `this needs the ${scope} scope`);
}
