// Request checks shared by the attach upgrade and REST: transport security, the Host a request
// names and browser Origin (docs/protocol.md §1.4, docs/security.md).
import type { Context } from 'hono';
import { isLoopbackHost, plaintextRefused } from '../src/auth/startup-policy.ts';
import type { Config } from '../src/core/config.ts';
import { BindingError } from '../src/protocol/errors.ts';

/** TLS on our own socket, or a TLS-terminating proxy we were told to trust says so. */
export function requestIsSecure(c: Context, config: Config): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  if (!config.trustProxyTls) return false;
  return c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https';
}

/**
 * Production, and a non-loopback address without PTY_WS_ALLOW_PLAINTEXT, serve wss:// and https://
 * only: a plain request is refused before anything else is read.
 */
export function requireSecureTransport(c: Context, config: Config): void {
  if (plaintextRefused(config) && !requestIsSecure(c, config)) {
    throw new BindingError('PERMISSION_DENIED', 'this server requires TLS (wss:// or https://)', { metadata: { reason: 'tls_required' } });
  }
}

/**
 * Cross-site WebSocket hijacking guard: a browser always sends Origin on a WebSocket upgrade, so an
 * Origin that is neither our own nor listed in PTY_WS_ALLOWED_ORIGINS is refused. No Origin at all
 * means a non-browser client, which a hostile page cannot drive: it passes.
 */
export function checkOrigin(c: Context, config: Config): void {
  const origin = c.req.header('origin');
  if (origin === undefined) return;
  const allowed = config.allowedOrigins ?? [];
  if (allowed.includes('*')) return;
  const normalised = normaliseOrigin(origin);
  const self = `${requestIsSecure(c, config) ? 'https:' : 'http:'}//${new URL(c.req.url).host}`;
  if (normalised !== null && (normalised === normaliseOrigin(self) || allowed.includes(normalised))) return;
  throw new BindingError('PERMISSION_DENIED', `Origin ${JSON.stringify(origin)} is not allowed to attach (PTY_WS_ALLOWED_ORIGINS)`, { metadata: { reason: 'origin_not_allowed' } });
}

/**
 * A `Host` header naming this server: a loopback name or the bound address, at the port the request
 * came in on (the scheme's default when the header has none).
 */
export function hostNamesThisServer(host: string, config: Config, localPort: number | undefined, scheme: string): boolean {
  const h = parseHost(host, scheme);
  if (!h || (localPort !== undefined && h.port !== localPort)) return false;
  return isLoopbackHost(h.name) || h.name === config.host.toLowerCase();
}

/**
 * DNS rebinding guard (docs/security.md, attack 6): with PTY_WS_AUTH=off nothing but the address
 * keeps a web page from another origin out, and a page whose name was rebound to 127.0.0.1 is
 * same-origin with itself. Its requests carry its own name in `Host`, so only loopback Hosts at our
 * port are served. Returns the refusal's message, or null.
 */
export function foreignHost(c: Context, config: Config, localPort: number | undefined): string | null {
  if (config.auth) return null;
  const host = c.req.header('host') ?? '';
  const h = parseHost(host, requestIsSecure(c, config) ? 'https:' : 'http:');
  if (h && isLoopbackHost(h.name) && (localPort === undefined || h.port === localPort)) return null;
  return `Host ${JSON.stringify(host.slice(0, 100))} is not this server: with PTY_WS_AUTH=off only localhost, 127.0.0.0/8 and [::1]${localPort === undefined ? '' : ` at port ${localPort}`} are served`;
}

/** `name[:port]` as a browser sends it; null for anything else (paths, user info, spaces). */
function parseHost(host: string, scheme: string): { name: string; port: number } | null {
  if (host === '' || /[\s/\\?#@]/.test(host)) return null;
  try {
    const u = new URL(`${scheme}//${host}`);
    return { name: u.hostname.replace(/^\[|\]$/g, ''), port: u.port === '' ? (scheme === 'https:' ? 443 : 80) : Number(u.port) };
  } catch {
    return null;
  }
}

function normaliseOrigin(s: string): string | null {
  try {
    const u = new URL(s);
    return /^https?:$/.test(u.protocol) ? u.origin : null;
  } catch {
    return null;
  }
}
