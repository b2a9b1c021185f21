// What every request meets before its route (docs/security.md, attacks 6–8): the Host check when
// auth is off, tokens in the query, the failed-authentication throttle and JSON-only writes. As
// app-wide middleware it guards every route, those added later included.
import type { Context, MiddlewareHandler } from 'hono';
import { AuthFailureThrottle } from '../src/auth/auth-throttle.ts';
import { restError } from '../src/protocol/errors.ts';
import { peerFields, type Peer } from '../src/hub/audit.ts';
import type { AppDeps } from './deps.ts';
import { foreignHost } from './guards.ts';
import { bearerFromHeader, tokenInQuery } from './request.ts';
import { bearerFromProtocols, offeredProtocols } from '../src/protocol/subprotocol.ts';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const A2A_BINDING_PATH = /^\/(agents\/[^/]+|fleet)\/a2a\/(jsonrpc|rest)(\/|$)/;

export function edgeGuards(deps: AppDeps): MiddlewareHandler {
  const { config, auth, hub } = deps;
  const throttle = new AuthFailureThrottle(config.authFailures, () => hub.deps.clock.now());
  const knows = auth.knows?.bind(auth);
  /**
   * How long this request must wait. Only a request that presents a credential can be a guess:
   * /healthz, the AgentCard and the page are never throttled. Its own token's failures (a client
   * retrying a stale token) throttle it at once; its address's failures only when its token does
   * not verify, so one client's stale token does not lock out everyone behind the same NAT. An
   * address with no recent failure costs nothing here (no hash, no verification).
   */
  const throttledFor = async (address: string | undefined, credential: string | null): Promise<number> => {
    if (address === undefined || credential === null || !throttle.hasFailures(address)) return 0;
    const own = throttle.retryAfterMs(await tokenKey(address, credential));
    if (own > 0) return own;
    const shared = throttle.retryAfterMs(address);
    if (shared === 0) return 0;
    return (await auth.authenticate(credential).then(() => true, () => false)) ? 0 : shared;
  };

  const refuse = (c: Context, status: number, code: string, message: string, headers: Record<string, string> = {}) => {
    if (c.req.header('upgrade')?.toLowerCase() === 'websocket') hub.deps.metrics.inc('upgrade_rejections_total', { status: String(status) });
    hub.deps.logger.log('warn', 'audit.refused', { path: c.req.path, status, code, message, ...peerFields(peerOf(c, deps)) });
    return c.json(restError(code, message), status as 400, headers);
  };

  return async (c, next) => {
    const wrongHost = foreignHost(c, config, deps.localPort(c));
    if (wrongHost) return refuse(c, 421, 'host_not_allowed', wrongHost);
    const where = await tokenInQuery(c, knows);
    if (where !== null) {
      return refuse(c, 400, 'INVALID_REQUEST', `tokens must not travel in the URL query (${where}): use Authorization: Bearer or the bearer.<token> subprotocol`);
    }
    const address = clientAddress(c, deps);
    const credential = presentedCredential(c);
    const wait = await throttledFor(address, credential);
    if (wait > 0) {
      return refuse(c, 429, 'auth_throttled', `too many failed authentications from ${address}: try again in ${Math.ceil(wait / 1000)} s`, { 'retry-after': String(Math.ceil(wait / 1000)) });
    }
    // The A2A bindings check their bodies themselves and answer in their own error shapes (routes/a2a-request.ts).
    if (WRITES.has(c.req.method) && !A2A_BINDING_PATH.test(c.req.path) && !jsonOrNoBody(c)) {
      return refuse(c, 415, 'unsupported_media_type', `a ${c.req.method} body must be JSON (content-type: application/json)`);
    }
    await next();
    if (c.res.status !== 401) return;
    if (address !== undefined) {
      // Failures count against the address, and against the address with this token's hash.
      throttle.failed(address);
      if (credential !== null) throttle.failed(await tokenKey(address, credential));
    }
    if (!c.res.headers.has('www-authenticate')) {
      const res = new Response(c.res.body, c.res);
      res.headers.set('www-authenticate', bearerChallenge(credential));
      c.res = res;
    }
  };
}

/** The throttle's key for one token from one address: never the token itself. */
async function tokenKey(address: string, credential: string): Promise<string> {
  return `${address} ${await sha256Hex(credential)}`;
}

/**
 * Every 401 says how to authenticate (RFC 9110 §11.6.1), and whether the bearer sent was the
 * problem (RFC 6750 §3.1): a client that sent none is told what to send, one whose token failed
 * that it must get another.
 */
function bearerChallenge(credential: string | null): string {
  return credential === null ? 'Bearer realm="pty-ws"' : 'Bearer realm="pty-ws", error="invalid_token"';
}

/** A bearer in the Authorization header or the WebSocket subprotocol, or null when none was sent. */
function presentedCredential(c: Context): string | null {
  const header = bearerFromHeader(c);
  if (header !== null) return header;
  const offered = offeredProtocols(c.req.header('sec-websocket-protocol'));
  return offered?.some((p) => p.startsWith('bearer.')) ? (bearerFromProtocols(offered) ?? '') : null;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A body a browser can send cross-site without asking (text/plain, a form) must never act: writes
 * carry JSON or nothing at all.
 */
function jsonOrNoBody(c: Context): boolean {
  const type = c.req.header('content-type');
  if (type === undefined) return (c.req.header('content-length') ?? '0') === '0' && c.req.header('transfer-encoding') === undefined;
  const media = type.split(';')[0]!.trim().toLowerCase();
  return media === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(media);
}

/** The address to hold failures against: the socket's peer, or behind a trusted proxy the client it saw. */
function clientAddress(c: Context, deps: AppDeps): string | undefined {
  const forwarded = deps.config.trustProxyTls ? c.req.header('x-forwarded-for')?.split(',').at(-1)?.trim() : undefined;
  return forwarded || deps.remoteAddress(c);
}

export function peerOf(c: Context, deps: AppDeps): Peer {
  const peer: Peer = {};
  const remote = deps.remoteAddress(c);
  if (remote) peer.remoteAddress = remote;
  const ua = c.req.header('user-agent');
  if (ua) peer.userAgent = ua;
  const forwarded = deps.config.trustProxyTls ? c.req.header('x-forwarded-for') : undefined;
  if (forwarded) peer.forwardedFor = forwarded;
  return peer;
}
