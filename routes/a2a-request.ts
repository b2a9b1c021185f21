// What every request of the standard A2A bindings passes before its operation runs: the checks of
// REST (TLS and the bearer; tokens in the query are refused app-wide by routes/edge.ts), the A2A
// version, the extensions it activates, and for a POST a JSON body.
import type { Context } from 'hono';
import type { Principal } from '../src/auth/principal.ts';
import { A2A_ERRORS, BindingError } from '../src/protocol/errors.ts';
import { EXTENSION_URI } from '../src/protocol/uris.ts';
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
  // A2A-Version absent: taken as ours (a plain curl); any other version is refused by name. A2A
  // v1.0 lets it travel as a header or as a query parameter of that name.
  const version = c.req.header('a2a-version') ?? c.req.query(A2A_VERSION_PARAM);
  if (version !== undefined && !/^1\.0(\.\d+)?$/.test(version.trim())) {
    throw new BindingError('INVALID_REQUEST', `A2A-Version ${version} is not supported: this agent speaks 1.0`, { a2a: A2A_ERRORS.versionNotSupported });
  }
  refuseOwnExtension(c);
  return principal;
}

/** The query parameter A2A v1.0 allows in place of the A2A-Version header. */
export const A2A_VERSION_PARAM = 'A2A-Version';

/**
 * pty-extensions/v1 rides on the pty-ws binding only (pty-extensions §1): activating it on these
 * bindings is refused, so a client does not take an answer without roles or replay for one with
 * them. Other extensions this agent does not know are ignored, as A2A asks.
 */
function refuseOwnExtension(c: Context): void {
  const asked = [c.req.header('a2a-extensions'), c.req.header('x-a2a-extensions')].flatMap((h) => h?.split(',') ?? []).map((s) => s.trim());
  if (!asked.includes(EXTENSION_URI)) return;
  // A2A v1.0 names no error for it: UnsupportedOperationError, whose metadata says which extension.
  throw new BindingError('UNSUPPORTED_OPERATION', `${EXTENSION_URI} is activated on the pty-ws binding only (the attach WebSocket); drop it from A2A-Extensions here`, {
    metadata: { reason: 'extension.unsupported_on_binding', extension: EXTENSION_URI },
  });
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
