// What every request of the standard A2A bindings passes before its operation runs: the checks of
// REST (TLS and the bearer; tokens in the query are refused app-wide by routes/edge.ts), the A2A version, and for a POST a JSON body.
import type { Context } from 'hono';
import type { Principal } from '../src/auth/principal.ts';
import { A2A_ERRORS, BindingError } from '../src/errors.ts';
import type { AppDeps } from './deps.ts';
import { requireSecureTransport } from './guards.ts';
import { bearerFromHeader, checkJsonDepth, MAX_BODY_BYTES, readText } from './request.ts';

const JSON_TYPES = ['application/json', 'application/a2a+json'];

/**
 * The caller, or null when the path names another instance (the route answers 404). The fleet
 * agent's paths (routes/fleet-a2a.ts) name none: `fleet` skips that check.
 */
export async function a2aCaller(c: Context, deps: AppDeps, fleet = false): Promise<Principal | null> {
  requireSecureTransport(c, deps.config);
  const principal = await deps.auth.authenticate(bearerFromHeader(c), deps.clientCertificate?.(c));
  if (!fleet && c.req.param('instance_id') !== deps.config.instanceId) return null;
  // A2A-Version absent: taken as ours (a plain curl); any other version is refused by name.
  const version = c.req.header('a2a-version');
  if (version !== undefined && !/^1\.0(\.\d+)?$/.test(version.trim())) {
    throw new BindingError('INVALID_REQUEST', `A2A-Version ${version} is not supported: this agent speaks 1.0`, { a2a: A2A_ERRORS.versionNotSupported });
  }
  return principal;
}

/**
 * A POST's JSON body (undefined when empty). The content type must say JSON: a page in a browser
 * can only send JSON cross-origin after a CORS preflight, which this server never grants, so it
 * cannot drive the agent even where no bearer is needed (PTY_WS_AUTH=off).
 */
export async function jsonBody(c: Context): Promise<unknown> {
  const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (!type || !JSON_TYPES.includes(type)) {
    throw new BindingError('INVALID_REQUEST', `the body must be sent as Content-Type: application/json (got ${type ?? 'none'})`, { a2a: A2A_ERRORS.contentTypeNotSupported });
  }
  const text = await readText(c, MAX_BODY_BYTES);
  if (text.trim() === '') return undefined;
  checkJsonDepth(text);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BindingError('INVALID_REQUEST', 'the body is not JSON', { a2a: A2A_ERRORS.parseError });
  }
}

/**
 * Opens an A2A stream (SSE) as a connection held open: admitted with the principal's attaches
 * before its operation runs (RATE_LIMITED past PTY_WS_MAX_CONNECTIONS_*, docs/security.md 8);
 * `ended` frees its place and goes to sseResponse.
 */
export async function admittedStream<T>(deps: AppDeps, principal: Principal, open: () => Promise<T>): Promise<{ value: T; ended: () => void }> {
  const ticket = deps.admission.admit(principal);
  const value = await open().catch((e: unknown) => {
    ticket.closed();
    throw e;
  });
  ticket.opened();
  return { value, ended: ticket.closed };
}
