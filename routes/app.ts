// The HTTP surface: health, AgentCard, REST sessions, the standard A2A bindings and the attach upgrade. Web-standard Request/Response only.
import { Hono } from 'hono';
import { restError } from '../src/protocol/errors.ts';
import { a2aJsonRpcRoute } from './a2a-jsonrpc.ts';
import { a2aRestRoute } from './a2a-rest.ts';
import { agentCard, serveCard } from './agent-card.ts';
import { attachHandler } from './attach.ts';
import type { AppDeps } from './deps.ts';
import { edgeGuards } from './edge.ts';
import { fleetA2aRoutes } from './fleet-a2a.ts';
import { fleetRoutes } from './fleet.ts';
import { requestIsSecure } from './guards.ts';
import { restFaultHandler } from './rest-fault.ts';
import { bearerFromHeader, publicOrigins } from './request.ts';
import { hasScope } from '../src/auth/principal.ts';
import { sessionRoutes } from './sessions.ts';
import { hostRoutes } from './hosts.ts';
import { principalShareRoutes } from './shares.ts';
import { webAssetHandler, webPageHandler } from './web-page.ts';

export function createApp(deps: AppDeps): Hono {
  const app = new Hono();
  app.use('*', edgeGuards(deps));

  // Alive: the process serves HTTP (it only starts once the database and PTY host answered).
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  // Ready: each part it needs answered, within its probe time (src/core/readiness.ts).
  app.get('/readyz', async (c) => {
    const { ready, checks } = await deps.ready();
    return ready ? c.json({ status: 'ready', checks }) : c.json({ status: 'unavailable', checks }, 503);
  });
  app.get('/metrics', async (c) => {
    const principal = await deps.auth.authenticate(bearerFromHeader(c), deps.clientCertificate?.(c)).catch(() => null);
    if (!principal || !hasScope(principal, 'pty:observe')) return c.json(restError('UNAUTHENTICATED', 'metrics need a bearer with pty:observe'), 401);
    const { contentType, body } = await deps.renderMetrics();
    return c.body(body, 200, { 'content-type': contentType });
  });
  app.get('/.well-known/agent-card.json', (c) => serveCard(c, agentCard(deps.config, publicOrigins(c, deps.config, deps.localPort(c), requestIsSecure(c, deps.config)), deps.auth.enforced, deps.hub.supportedOperations())));
  app.get('/agents/:instance_id/sessions/:session_id/attach', attachHandler(deps));
  app.route('/agents/:instance_id/sessions', sessionRoutes(deps));
  app.route('/agents/:instance_id/shares', principalShareRoutes(deps));
  app.route('/agents/:instance_id/hosts', hostRoutes(deps));
  app.route('/', fleetRoutes(deps));
  a2aJsonRpcRoute(app, deps);
  a2aRestRoute(app, deps);
  fleetA2aRoutes(app, deps);
  app.get('/', webPageHandler(deps));
  app.get('/assets/:name', webAssetHandler(deps));
  // Routes without an onError of their own (health, metrics, the web page, the AgentCard).
  app.onError(restFaultHandler(deps.hub.deps.logger, 'HTTP handler failed'));
  app.notFound((c) => c.json(restError('not_found', `no route for ${c.req.method} ${c.req.path}`), 404));
  return app;
}
