// The HTTP surface: health, AgentCard, REST sessions and the attach upgrade. Web-standard Request/Response only.
import { Hono } from 'hono';
import { restError } from '../src/errors.ts';
import { agentCard } from './agent-card.ts';
import { attachHandler } from './attach.ts';
import type { AppDeps } from './deps.ts';
import { publicOrigins } from './request.ts';
import { sessionRoutes } from './sessions.ts';
import { webAssetHandler, webPageHandler } from './web-page.ts';

export function createApp(deps: AppDeps): Hono {
  const app = new Hono();

  app.get('/healthz', async (c) => ((await deps.ready()) ? c.json({ status: 'ok' }) : c.json({ status: 'unavailable' }, 503)));
  app.get('/.well-known/agent-card.json', (c) => c.json(agentCard(deps.config, publicOrigins(c), deps.auth.enforced, deps.hub.supportedOperations())));
  app.get('/agents/:instance_id/sessions/:session_id/attach', attachHandler(deps));
  app.route('/agents/:instance_id/sessions', sessionRoutes(deps));
  app.get('/', webPageHandler(deps));
  app.get('/assets/:name', webAssetHandler(deps));
  app.notFound((c) => c.json(restError('not_found', `no route for ${c.req.method} ${c.req.path}`), 404));
  return app;
}
