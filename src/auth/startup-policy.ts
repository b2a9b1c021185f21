// Security settings that only make sense together (docs/protocol.md §1, README "Authentication, scopes and production mode"): checked once at start.
import type { Config } from '../config.ts';

/** True for an address only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/** Shortest HS256 secret accepted in production: 256 bits, the size of the HMAC output. */
export const MIN_PRODUCTION_SECRET_BYTES = 32;

/** Every problem with the combination, each naming the settings involved; empty when it can start. */
export function securityProblems(c: Config): string[] {
  const problems: string[] = [];
  const credentials = c.tokensFile !== undefined || c.jwtSecret !== undefined || c.jwtPublicKey !== undefined || c.jwksUrl !== undefined;
  if (!c.auth) {
    if (c.production) problems.push('PTY_WS_AUTH=off is refused with PTY_WS_PRODUCTION=1: production requires auth');
    if (!isLoopbackHost(c.host)) problems.push(`PTY_WS_AUTH=off is refused on the non-loopback address PTY_WS_HOST=${c.host}: anyone who can reach it could type into its sessions`);
    if (credentials) problems.push('PTY_WS_AUTH=off contradicts PTY_WS_TOKENS_FILE / PTY_WS_JWT_*: remove one or the other');
  }
  if ((c.tlsCert === undefined) !== (c.tlsKey === undefined)) problems.push('PTY_WS_TLS_CERT and PTY_WS_TLS_KEY go together: set both or neither');
  if (c.production) {
    if (c.tlsCert === undefined && !c.trustProxyTls) {
      problems.push('PTY_WS_PRODUCTION=1 serves wss:// only: set PTY_WS_TLS_CERT and PTY_WS_TLS_KEY, or PTY_WS_TRUST_PROXY_TLS=1 behind a TLS-terminating proxy');
    }
    if (c.jwtSecret !== undefined && new TextEncoder().encode(c.jwtSecret).length < MIN_PRODUCTION_SECRET_BYTES) {
      problems.push(`PTY_WS_JWT_SECRET is too short for production: at least ${MIN_PRODUCTION_SECRET_BYTES} bytes`);
    }
    if (c.jwksUrl !== undefined && /^http:/i.test(c.jwksUrl) && !isLoopbackUrl(c.jwksUrl)) {
      problems.push('PTY_WS_JWKS_URL must be https:// in production (plain http is accepted only on a loopback address)');
    }
  }
  return problems;
}

function isLoopbackUrl(raw: string): boolean {
  try {
    return isLoopbackHost(new URL(raw).hostname);
  } catch {
    return false;
  }
}
