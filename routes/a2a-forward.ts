// The fleet agent's hop to the instance that owns a terminal (docs/deployment.md, "The fleet
// agent"): the request goes to that instance's own A2A endpoint at its registered base URL, with
// the caller's Authorization header (tokens are fleet-wide, and the owner checks them again), and
// its answer — JSON or an SSE stream — comes back as it is. Not a proxy for anything else: the only
// URLs are the A2A paths of registered instances, built here from the registry row.
import type { Context } from 'hono';
import { BindingError } from '../src/protocol/errors.ts';
import type { InstanceRecord } from '../src/ports/instance-registry.ts';

/** The caller's headers the owner needs; no others (cookies, Host, hop headers) are passed. */
const PASSED = ['authorization', 'a2a-version', 'a2a-extensions', 'accept'];
/** Statuses a proxy in front of the owner answers when it is down (nginx: 502). */
const GATEWAY = [502, 503, 504];

/**
 * `binding` is the path under the owner's `/agents/{instance_id}/a2a`: `/jsonrpc` or
 * `/rest/...` (built by the caller from a matched route, never copied from the request).
 */
export async function forwardA2a(c: Context, owner: InstanceRecord, binding: string, method: 'GET' | 'POST', body: unknown): Promise<Response> {
  const url = `${ownerBase(owner)}/agents/${encodeURIComponent(owner.instanceId)}/a2a${binding}`;
  const headers = new Headers();
  for (const name of PASSED) {
    const value = c.req.header(name);
    if (value !== undefined) headers.set(name, value);
  }
  if (body !== undefined) headers.set('content-type', 'application/json');
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' });
  } catch (e) {
    throw unreachable(owner, causeOf(e));
  }
  const type = res.headers.get('content-type') ?? '';
  // Only the owner's own A2A answers come back: a proxy's error page or a redirect means it is not there.
  if ((res.status >= 300 && res.status < 400) || (GATEWAY.includes(res.status) && !/json|event-stream/.test(type))) {
    await res.body?.cancel().catch(() => undefined);
    throw unreachable(owner, `HTTP ${res.status}`);
  }
  const out = new Headers({ 'content-type': type });
  const cache = res.headers.get('cache-control');
  if (cache) out.set('cache-control', cache);
  // An SSE stream is piped through as it comes (no buffering in a proxy in front of this instance either).
  if (type.startsWith('text/event-stream')) out.set('x-accel-buffering', 'no');
  return new Response(res.body, { status: res.status, headers: out });
}

/** The registered base URL, refused unless it is a plain http(s) origin or origin + path. */
function ownerBase(owner: InstanceRecord): string {
  let u: URL;
  try {
    u = new URL(owner.baseUrl);
  } catch {
    throw unreachable(owner, `its registered base URL ${JSON.stringify(owner.baseUrl)} is not a URL`);
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || u.search || u.hash) throw unreachable(owner, `its registered base URL ${JSON.stringify(owner.baseUrl)} is not an http(s) base URL`);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
  return String(cause?.code ?? cause?.message ?? e);
}

function unreachable(owner: InstanceRecord, why: string): BindingError {
  return new BindingError('INTERNAL', `instance ${owner.instanceId} owns this terminal but does not answer at ${owner.baseUrl} (${why}): try again once it is back (GET /instances tells whether it is reachable)`, {
    metadata: { instance_id: owner.instanceId, base_url: owner.baseUrl },
  });
}
