// Request checks shared by the attach upgrade and REST: transport security and browser Origin (docs/protocol.md §1.4).
import type { Context } from 'hono';
import type { Config } from '../src/config.ts';
import { BindingError } from '../src/errors.ts';

/** TLS on our own socket, or a TLS-terminating proxy we were told to trust says so. */
export function requestIsSecure(c: Context, config: Config): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  if (!config.trustProxyTls) return false;
  return c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https';
}

/** Production serves wss:// and https:// only: a plain request is refused before anything else is read. */
export function requireSecureTransport(c: Context, config: Config): void {
  if (config.production && !requestIsSecure(c, config)) {
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

function normaliseOrigin(s: string): string | null {
  try {
    const u = new URL(s);
    return /^https?:$/.test(u.protocol) ? u.origin : null;
  } catch {
    return null;
  }
}
