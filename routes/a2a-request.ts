// What every request of the standard A2A bindings passes before its operation runs: the checks of
// REST (TLS and the bearer; tokens in the query are refused app-wide by routes/edge.ts), the A2A version, and for a POST a JSON body.
import type { Context } from 'hono';
import type { Principal } from '../src/auth/principal.ts';
import { A2A_ERRORS, BindingError } from '../src/errors.ts';
import type { AppDeps } from './deps.ts';
import { requireSecureTransport } from './guards.ts';
import { bearerFromHeader } from './request.ts';

/** A request body larger than this is refused before it is parsed. */
const MAX_BODY_BYTES = 1024 * 1024;
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
  const text = await readText(c.req.raw, MAX_BODY_BYTES);
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BindingError('INVALID_REQUEST', 'the body is not JSON', { a2a: A2A_ERRORS.parseError });
  }
}

/** The body as text, refused as soon as it grows past `max` bytes (a missing Content-Length does not get around it). */
async function readText(req: Request, max: number): Promise<string> {
  if (!req.body) return '';
  const reader = req.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.length;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new BindingError('INVALID_REQUEST', `the body is larger than ${max} bytes`);
    }
    text += decoder.decode(value, { stream: true });
  }
}
