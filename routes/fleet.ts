// The fleet reads (INTERFACE "The fleet", docs/deployment.md): GET /instances and GET /sessions
// answer from any instance for every instance registered in the shared database. Each session's
// attach_url is at its owner's registered base URL (the front door's, behind one), so a client
// that listed the fleet anywhere attaches at the right instance.
import { Hono, type MiddlewareHandler } from 'hono';
import { coversSession, hasScope, type Principal } from '../src/auth/principal.ts';
import { BindingError } from '../src/protocol/errors.ts';
import { restFaultHandler } from './rest-fault.ts';
import { instanceInfo, isReachable } from '../src/services/instance-registry.ts';
import type { FleetSessionList, InstanceList } from '../src/protocol/fleet-info.ts';
import type { AppDeps } from './deps.ts';
import { requireSecureTransport } from './guards.ts';
import { bearerFromHeader } from './request.ts';
import { onUnlinkedHost, sessionInfo } from './session-view.ts';

type Env = { Variables: { principal: Principal } };

export function fleetRoutes(deps: AppDeps): Hono<Env> {
  const { config, registry, hub, auth } = deps;
  const app = new Hono<Env>();

  const authenticated: MiddlewareHandler<Env> = async (c, next) => {
    requireSecureTransport(c, config);
    const principal = await auth.authenticate(bearerFromHeader(c), deps.clientCertificate?.(c));
    if (!hasScope(principal, 'pty:observe')) throw new BindingError('PERMISSION_DENIED', 'this needs the pty:observe scope');
    c.set('principal', principal);
    await next();
  };
  app.use('/instances', authenticated);
  app.use('/sessions', authenticated);

  app.get('/instances', async (c) => {
    const now = hub.deps.clock.now();
    return c.json({ instances: (await registry.list()).map((r) => instanceInfo(r, now)) } satisfies InstanceList);
  });

  app.get('/sessions', async (c) => {
    const principal = c.get('principal');
    const [instances, sessions] = await Promise.all([registry.list(), registry.registeredSessions()]);
    const now = hub.deps.clock.now();
    const byId = new Map(instances.map((r) => [r.instanceId, r]));
    const list = sessions.flatMap((s) => {
      const owner = byId.get(s.instanceId);
      // A session of an instance registered after the instances were read waits for the next read.
      if (!owner || !coversSession(principal, s.id)) return [];
      const own = s.instanceId === config.instanceId;
      const info = sessionInfo(s, owner.baseUrl.replace(/^http/, 'ws'), own && s.state === 'running' && !hub.ptyHostReachable, own && onUnlinkedHost(s, (h) => deps.hosts.placed.linked(h)));
      return [{ ...info, reachable: isReachable(owner, now) }];
    });
    return c.json({ sessions: list } satisfies FleetSessionList);
  });

  app.onError(restFaultHandler(hub.deps.logger, 'fleet read failed'));
  return app;
}
