// A2A v1.0's JSON-RPC 2.0 binding: POST /agents/{instance_id}/a2a/jsonrpc (docs/a2a.md). Streaming
// methods answer as Server-Sent Events, each event a JSON-RPC response carrying the request's id.
import type { Context, Handler, Hono } from 'hono';
import type { Principal } from '../src/auth/principal.ts';
import type { A2aOperations } from '../src/a2a/control-plane.ts';
import { sseResponse } from '../src/a2a/sse.ts';
import { jsonRpcError, jsonRpcHttpStatus } from '../src/a2a/wire-errors.ts';
import { A2A_ERRORS, BindingError, toBindingError } from '../src/protocol/errors.ts';
import type { AppDeps } from './deps.ts';
import { a2aCaller, admittedStream, jsonBody } from './a2a-request.ts';
import { readTextWithin } from './request.ts';

type Id = string | number | null;
export interface JsonRpcRequest {
  id: Id;
  method: string;
  params: unknown;
}
/** The owner's answer where the operation belongs to another instance (the fleet agent); undefined: answered here. */
export type JsonRpcForward = (c: Context, principal: Principal, req: JsonRpcRequest) => Promise<Response | undefined>;
type Method = (a2a: A2aOperations, p: Principal, params: unknown) => Promise<unknown>;

const METHODS: Record<string, Method> = {
  SendMessage: (a2a, p, params) => a2a.sendMessage(p, params),
  GetTask: (a2a, p, params) => a2a.getTask(p, params),
  ListTasks: (a2a, p, params) => a2a.listTasks(p, params),
  CancelTask: (a2a, p, params) => a2a.cancelTask(p, params),
  GetExtendedAgentCard: async (a2a) => a2a.extendedAgentCard(),
  CreateTaskPushNotificationConfig: (a2a, p, params) => a2a.createPushConfig(p, params),
  GetTaskPushNotificationConfig: (a2a, p, params) => a2a.getPushConfig(p, params),
  ListTaskPushNotificationConfigs: (a2a, p, params) => a2a.listPushConfigs(p, params),
  DeleteTaskPushNotificationConfig: (a2a, p, params) => a2a.deletePushConfig(p, params),
};
const STREAMING: Record<string, (a2a: A2aOperations, p: Principal, params: unknown) => Promise<AsyncIterable<unknown>>> = {
  SendStreamingMessage: (a2a, p, params) => a2a.streamMessage(p, params),
  SubscribeToTask: (a2a, p, params) => a2a.subscribe(p, params),
};

export function a2aJsonRpcRoute(app: Hono, deps: AppDeps): void {
  postJsonRpc(app, '/agents/:instance_id/a2a/jsonrpc', jsonRpcHandler(deps, deps.a2a, (c) => a2aCaller(c, deps)));
}

/** The endpoint at `path`, and at `path/`, which conformance tools send. */
export function postJsonRpc(app: Hono, path: string, handler: Handler): void {
  app.post(path, handler);
  app.post(`${path}/`, handler);
}

/** One JSON-RPC endpoint over `a2a`; `caller` answers null for a path naming another instance. */
export function jsonRpcHandler(deps: AppDeps, a2a: A2aOperations, caller: (c: Context) => Promise<Principal | null>, forward?: JsonRpcForward): Handler {
  return async (c) => {
    let id: Id = null;
    let bodyRead = false;
    try {
      const principal = await caller(c);
      if (!principal) {
        const err = new BindingError('INVALID_REQUEST', `unknown instance ${c.req.param('instance_id')}: this server answers for ${deps.config.instanceId}`, { a2a: A2A_ERRORS.notFound, http: 404 });
        return c.json({ jsonrpc: '2.0', id: await readableId(c), error: jsonRpcError(err) }, 404);
      }
      bodyRead = true;
      const req = envelope(await jsonBody(c));
      id = req.id;
      const forwarded = await forward?.(c, principal, req);
      if (forwarded) return forwarded;
      const stream = ownEntry(STREAMING, req.method);
      if (stream) {
        const events = await admittedStream(deps, principal, () => stream(a2a, principal, req.params));
        const requestId = id;
        return sseResponse(events.value, (result) => ({ jsonrpc: '2.0', id: requestId, result }), (e) => `data: ${JSON.stringify(failure(c, deps, requestId, e).body)}\n\n`, events.ended);
      }
      const method = ownEntry(METHODS, req.method);
      if (!method) throw new BindingError('INVALID_REQUEST', `no method ${JSON.stringify(req.method)} in A2A v1.0's JSON-RPC binding`, { a2a: A2A_ERRORS.methodNotFound });
      return c.json({ jsonrpc: '2.0', id, result: await method(a2a, principal, req.params) });
    } catch (e) {
      // Refused before the body was read (the bearer, the version): the id is echoed all the same.
      if (!bodyRead) id = await readableId(c);
      const { body, status } = failure(c, deps, id, e);
      return c.json(body, status as 200);
    }
  };
}

/**
 * At most this much of a body is read for its id alone, when the request is refused before its
 * body is (a caller with no valid bearer need not be read further).
 */
const ID_READ_BYTES = 64 * 1024;

/** The request's id, when a small body that is a JSON-RPC request names a valid one; else null. */
async function readableId(c: Context): Promise<Id> {
  const text = await readTextWithin(c, ID_READ_BYTES).catch(() => null);
  if (!text) return null;
  try {
    const id = (JSON.parse(text) as { id?: unknown } | null)?.id;
    return validId(id) ? (id ?? null) : null;
  } catch {
    return null;
  }
}

function validId(id: unknown): id is Id | undefined {
  return id === undefined || id === null || typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
}

/** A table's own entry: a method named `constructor` or `__proto__` must not find Object.prototype's. */
export function ownEntry<T>(table: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

/** A JSON-RPC 2.0 request object; anything else is Invalid Request (-32600). */
function envelope(body: unknown): JsonRpcRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidRequest('a JSON-RPC request is a JSON object (batches are not supported)');
  const r = body as Record<string, unknown>;
  if (r.jsonrpc !== '2.0') throw invalidRequest('jsonrpc must be "2.0"');
  const id = r.id;
  if (!validId(id)) throw invalidRequest('id must be a string, an integer or null');
  if (typeof r.method !== 'string' || r.method === '') throw invalidRequest('method must be a non-empty string');
  const params = r.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw new BindingError('INVALID_REQUEST', 'params must be an object', { a2a: A2A_ERRORS.invalidParams });
  return { id: id ?? null, method: r.method, params };
}

function invalidRequest(message: string): BindingError {
  return new BindingError('INVALID_REQUEST', message);
}

function failure(c: Context, deps: AppDeps, id: Id, e: unknown): { body: unknown; status: number } {
  const err = toBindingError(e);
  if (err.code === 'INTERNAL') deps.hub.deps.logger.log('error', 'A2A JSON-RPC handler failed', { path: c.req.path, error: e });
  return { body: { jsonrpc: '2.0', id, error: jsonRpcError(err) }, status: jsonRpcHttpStatus(err) };
}
