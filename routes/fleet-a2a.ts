// The fleet agent's endpoints, served by every instance (docs/deployment.md, "The fleet agent"):
// its AgentCard at /fleet/.well-known/agent-card.json, JSON-RPC at POST /fleet/a2a/jsonrpc and
// HTTP+JSON under /fleet/a2a/rest/…, with the operations and paths of an instance's own
// (docs/a2a.md). What acts on another instance's terminal is forwarded to it (a2a-forward.ts).
import type { Context, Hono } from 'hono';
import type { Principal } from '../src/auth/principal.ts';
import type { InstanceRecord } from '../src/ports/instance-registry.ts';
import { forwardA2a } from './a2a-forward.ts';
import { jsonRpcHandler, ownEntry, postJsonRpc, type JsonRpcRequest } from './a2a-jsonrpc.ts';
import { a2aCaller } from './a2a-request.ts';
import { bodyObject, restHandler, type Call, type ForwardKind, type Route } from './a2a-rest.ts';
import { agentCard, serveCard } from './agent-card.ts';
import type { AppDeps } from './deps.ts';
import { requestIsSecure } from './guards.ts';
import { publicOrigins } from './request.ts';

export const FLEET_PREFIX = '/fleet';

export function fleetA2aRoutes(app: Hono, deps: AppDeps): void {
  const { fleet } = deps;
  const caller = (c: Context) => a2aCaller(c, deps, true);
  const OWNER: Record<string, (p: Principal, params: unknown) => Promise<InstanceRecord | undefined>> = {
    SendMessage: (p, params) => fleet.messageOwner(p, params),
    SendStreamingMessage: (p, params) => fleet.messageOwner(p, params),
    CancelTask: (p, params) => fleet.taskOwner(p, params, 'cancel'),
    SubscribeToTask: (p, params) => fleet.taskOwner(p, params, 'subscribe'),
  };

  app.get(`${FLEET_PREFIX}/.well-known/agent-card.json`, (c) =>
    serveCard(c, agentCard(deps.config, publicOrigins(c, deps.config, deps.localPort(c), requestIsSecure(c, deps.config)), deps.auth.enforced, deps.hub.supportedOperations(), 'fleet')),
  );

  postJsonRpc(
    app,
    `${FLEET_PREFIX}/a2a/jsonrpc`,
    jsonRpcHandler(deps, fleet, caller, async (c, principal, req: JsonRpcRequest) => {
      const owner = await ownEntry(OWNER, req.method)?.(principal, req.params);
      return owner && forwardA2a(c, owner, '/jsonrpc', 'POST', { jsonrpc: '2.0', id: req.id, method: req.method, params: req.params });
    }),
  );

  const restOwner = async (kind: ForwardKind, call: Call): Promise<{ owner?: InstanceRecord; body?: unknown }> => {
    if (kind === 'send' || kind === 'stream') {
      const body = await call.body();
      return { owner: await fleet.messageOwner(call.principal, body ?? {}), body };
    }
    const body = kind === 'cancel' ? await bodyObject(call) : undefined;
    return { owner: await fleet.taskOwner(call.principal, { id: call.id }, kind), body };
  };
  app.all(
    `${FLEET_PREFIX}/a2a/rest/*`,
    restHandler(deps, fleet, /^\/fleet\/a2a\/rest(\/.*)$/, caller, async (c, route: Route & { forward: ForwardKind }, call) => {
      const { owner, body } = await restOwner(route.forward, call);
      if (!owner) return undefined;
      // The owner's path, rebuilt from the matched route and the decoded id (never the request's own path).
      const path = route.forward === 'send' || route.forward === 'stream' ? `/message:${route.forward}` : `/tasks/${encodeURIComponent(call.id)}:${route.forward}`;
      return forwardA2a(c, owner, `/rest${path}`, route.method === 'GET' ? 'GET' : 'POST', body);
    }),
  );
}
