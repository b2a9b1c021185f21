// A2A v1.0's HTTP+JSON binding under /agents/{instance_id}/a2a/rest (docs/a2a.md): `/message:send`,
// `/message:stream`, `/tasks`, `/tasks/{id}`, `/tasks/{id}:cancel`, `/tasks/{id}:subscribe`, the
// push-config paths and `/extendedAgentCard`. Paths with `:verb` suffixes are matched here, not by
// Hono's router, which reads `:` as the start of a parameter.
import type { Context, Handler, Hono } from 'hono';
import type { Principal } from '../src/auth/principal.ts';
import type { A2aOperations } from '../src/a2a/control-plane.ts';
import { invalidParams } from '../src/a2a/requests.ts';
import { sseResponse } from '../src/a2a/sse.ts';
import { restErrorBody } from '../src/a2a/wire-errors.ts';
import { A2A_ERRORS, BindingError, toBindingError } from '../src/protocol/errors.ts';
import type { AppDeps } from './deps.ts';
import { a2aCaller, A2A_VERSION_PARAM, admittedStream, jsonBody } from './a2a-request.ts';

export interface Call {
  a2a: A2aOperations;
  principal: Principal;
  /** The `{id}` of a task path. */
  id: string;
  /** The `{configId}` of a push-config path. */
  sub: string;
  query: URLSearchParams;
  body: () => Promise<unknown>;
}
type Answer = { json: unknown } | { stream: AsyncIterable<unknown> };
/** The operations the fleet agent may forward to the instance owning their terminal (routes/fleet-a2a.ts). */
export type ForwardKind = 'send' | 'stream' | 'cancel' | 'subscribe';
export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  path: RegExp;
  run: (call: Call) => Promise<Answer>;
  forward?: ForwardKind;
  /** Answers with an SSE stream: a connection held open, admitted like an attach. */
  stream?: true;
}
/** The owner's answer where the operation belongs to another instance (the fleet agent); undefined: answered here. */
export type RestForward = (c: Context, route: Route & { forward: ForwardKind }, call: Call) => Promise<Response | undefined>;

const TASK = '([^/:]+)';
const ROUTES: Route[] = [
  { method: 'POST', path: /^\/message:send$/, run: async (r) => ({ json: await r.a2a.sendMessage(r.principal, await r.body()) }), forward: 'send' },
  { method: 'POST', path: /^\/message:stream$/, stream: true, run: async (r) => ({ stream: await r.a2a.streamMessage(r.principal, await r.body()) }), forward: 'stream' },
  { method: 'GET', path: /^\/tasks$/, run: async (r) => ({ json: await r.a2a.listTasks(r.principal, listQuery(r.query)) }) },
  { method: 'GET', path: new RegExp(`^/tasks/${TASK}$`), run: async (r) => ({ json: await r.a2a.getTask(r.principal, { id: r.id, historyLength: numberParam(r.query, 'historyLength') }) }) },
  { method: 'POST', path: new RegExp(`^/tasks/${TASK}:cancel$`), run: async (r) => ({ json: await r.a2a.cancelTask(r.principal, { ...(await bodyObject(r)), id: r.id }) }), forward: 'cancel' },
  { method: 'POST', path: new RegExp(`^/tasks/${TASK}:subscribe$`), stream: true, run: async (r) => ({ stream: await r.a2a.subscribe(r.principal, { id: r.id }) }), forward: 'subscribe' },
  { method: 'GET', path: new RegExp(`^/tasks/${TASK}:subscribe$`), stream: true, run: async (r) => ({ stream: await r.a2a.subscribe(r.principal, { id: r.id }) }), forward: 'subscribe' },
  { method: 'POST', path: new RegExp(`^/tasks/${TASK}/pushNotificationConfigs$`), run: async (r) => ({ json: await r.a2a.createPushConfig(r.principal, { ...(await bodyObject(r)), taskId: r.id }) }) },
  { method: 'GET', path: new RegExp(`^/tasks/${TASK}/pushNotificationConfigs$`), run: async (r) => ({ json: await r.a2a.listPushConfigs(r.principal, { taskId: r.id, pageSize: numberParam(r.query, 'pageSize'), pageToken: r.query.get('pageToken') ?? undefined }) }) },
  { method: 'GET', path: new RegExp(`^/tasks/${TASK}/pushNotificationConfigs/${TASK}$`), run: async (r) => ({ json: await r.a2a.getPushConfig(r.principal, { taskId: r.id, id: r.sub }) }) },
  { method: 'DELETE', path: new RegExp(`^/tasks/${TASK}/pushNotificationConfigs/${TASK}$`), run: async (r) => ({ json: await r.a2a.deletePushConfig(r.principal, { taskId: r.id, id: r.sub }) }) },
  { method: 'GET', path: /^\/extendedAgentCard$/, run: async (r) => r.a2a.extendedAgentCard() },
];

export function a2aRestRoute(app: Hono, deps: AppDeps): void {
  app.all('/agents/:instance_id/a2a/rest/*', restHandler(deps, deps.a2a, /^\/agents\/[^/]+\/a2a\/rest(\/.*)$/, (c) => a2aCaller(c, deps)));
}

/** One HTTP+JSON endpoint over `a2a`, its paths after `prefix`'s group; `caller` answers null for a path naming another instance. */
export function restHandler(deps: AppDeps, a2a: A2aOperations, prefix: RegExp, caller: (c: Context) => Promise<Principal | null>, forward?: RestForward): Handler {
  return async (c) => {
    try {
      const principal = await caller(c);
      if (!principal) throw new BindingError('INVALID_REQUEST', `unknown instance ${c.req.param('instance_id')}: this server answers for ${deps.config.instanceId}`, { a2a: A2A_ERRORS.notFound, http: 404 });
      // The raw path: a task id is percent-decoded once, here, after the path is split.
      const rel = prefix.exec(new URL(c.req.url).pathname)?.[1] ?? '';
      const matches = ROUTES.filter((r) => r.path.test(rel));
      const route = matches.find((r) => r.method === c.req.method);
      if (!route && matches.length > 0) throw new BindingError('INVALID_REQUEST', `${c.req.method} is not allowed on ${rel}`, { a2a: A2A_ERRORS.methodNotAllowed, http: 405 });
      if (!route) throw new BindingError('INVALID_REQUEST', `no A2A HTTP+JSON route ${rel}`, { a2a: A2A_ERRORS.notFound, http: 404 });
      const [, id = '', sub = ''] = route.path.exec(rel) ?? [];
      let body: Promise<unknown> | undefined;
      const call: Call = { a2a, principal, id: decodeSegment(id), sub: decodeSegment(sub), query: new URL(c.req.url).searchParams, body: () => (body ??= jsonBody(c)) };
      const forwarded = route.forward && (await forward?.(c, { ...route, forward: route.forward }, call));
      if (forwarded) return forwarded;
      const { value: answer, ended } = route.stream ? await admittedStream(deps, principal, () => route.run(call)) : { value: await route.run(call), ended: undefined };
      if ('json' in answer) return a2aJson(c, answer.json, 200);
      return sseResponse(answer.stream, (event) => event, (e) => `event: error\ndata: ${JSON.stringify(failure(c, deps, e).body)}\n\n`, ended);
    } catch (e) {
      const { body, status } = failure(c, deps, e);
      return a2aJson(c, body, status);
    }
  };
}

/** A2A v1.0's media type for the HTTP+JSON binding's answers. */
const A2A_JSON = 'application/a2a+json';

function a2aJson(c: Context, body: unknown, status: number): Response {
  return c.body(JSON.stringify(body), status as 200, { 'content-type': A2A_JSON });
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalidParams(`an id in the path is not valid percent-encoding: ${segment.slice(0, 128)}`);
  }
}

/** A body that is a JSON object (CancelTask's `metadata`, a push config); an empty body is fine. */
export async function bodyObject(r: Call): Promise<Record<string, unknown>> {
  const body = await r.body();
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BindingError('INVALID_REQUEST', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** ListTasks' query parameters, besides A2A-Version. */
const LIST_PARAMS = ['tenant', 'contextId', 'status', 'pageSize', 'pageToken', 'historyLength', 'statusTimestampAfter', 'includeArtifacts'];

/**
 * ListTasks' query string as its params: numbers and booleans as JSON values, anything else left for
 * validation to name. A parameter it does not know is refused: dropping `context_id=` would answer
 * every task where the caller asked for one context's.
 */
function listQuery(q: URLSearchParams): Record<string, unknown> {
  const unknown = [...new Set(q.keys())].filter((k) => !LIST_PARAMS.includes(k) && k !== A2A_VERSION_PARAM);
  if (unknown.length > 0) throw invalidParams(`unknown ListTasks parameter ${unknown.map((k) => JSON.stringify(k.slice(0, 64))).join(', ')} (it takes ${LIST_PARAMS.join(', ')})`);
  const out: Record<string, unknown> = {};
  for (const key of ['tenant', 'contextId', 'status', 'pageToken', 'statusTimestampAfter']) {
    const value = q.get(key);
    if (value !== null) out[key] = value;
  }
  out.pageSize = numberParam(q, 'pageSize');
  out.historyLength = numberParam(q, 'historyLength');
  const artifacts = q.get('includeArtifacts');
  if (artifacts !== null) out.includeArtifacts = artifacts === 'true' ? true : artifacts === 'false' ? false : artifacts;
  return out;
}

function numberParam(q: URLSearchParams, key: string): unknown {
  const value = q.get(key);
  if (value === null) return undefined;
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

function failure(c: Context, deps: AppDeps, e: unknown): { body: unknown; status: number } {
  const err = toBindingError(e);
  if (err.code === 'INTERNAL') deps.hub.deps.logger.log('error', 'A2A HTTP+JSON handler failed', { path: c.req.path, error: e });
  return { body: restErrorBody(err), status: err.httpStatus };
}
