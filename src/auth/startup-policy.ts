// Security settings that only make sense together (docs/protocol.md §1, docs/authentication.md): checked once at start.
import { MIN_REPLAY_FRAMES, MIN_REPLAY_SECONDS, type Config } from '../core/config.ts';

/** True for an address only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/** Shortest HS256 secret accepted in production: 256 bits, the size of the HMAC output. */
export const MIN_PRODUCTION_SECRET_BYTES = 32;

/**
 * Plain http/ws is refused on a request when a TLS proxy is trusted or production asks for TLS, and
 * on a non-loopback address unless the operator accepted plain text (docs/security.md, attack 7).
 */
export function plaintextRefused(c: Config): boolean {
  return c.production || (!c.allowPlaintext && !isLoopbackHost(c.host));
}

/** Settings that work but hand clients a poor URL: logged at start. */
export function securityWarnings(c: Config): string[] {
  if (c.publicUrl !== undefined) return [];
  const wildcard = ['0.0.0.0', '::', '[::]'].includes(c.host);
  if (!wildcard && !c.trustProxyTls) return [];
  return [
    `attach_url and the AgentCard name ${wildcard ? `the bound address ${c.host}` : 'this server’s own address, not the proxy’s'} for requests whose Host is not a loopback name or PTY_WS_HOST (a foreign Host is never echoed): set PTY_WS_PUBLIC_URL to the origin clients use`,
  ];
}

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
  if (c.tlsCert === undefined && !c.trustProxyTls && !c.allowPlaintext && !isLoopbackHost(c.host)) {
    problems.push(
      `PTY_WS_HOST=${c.host} is not a loopback address, and without TLS its bearer tokens and terminals would travel as plain text (pty-ws-v1 §11): ` +
        'set PTY_WS_TLS_CERT and PTY_WS_TLS_KEY, or PTY_WS_TRUST_PROXY_TLS=1 behind a TLS-terminating proxy, or accept it explicitly with PTY_WS_ALLOW_PLAINTEXT=1',
    );
  }
  // The env vars cannot go below the floor; code can (the tests' short logs), but not in production.
  if (c.production && c.replayBufferFrames < MIN_REPLAY_FRAMES) problems.push(`replay_buffer_frames ${c.replayBufferFrames} is below the minimum of ${MIN_REPLAY_FRAMES} (pty-ws-v1 §8.2)`);
  if (c.production && c.replayRetentionSeconds < MIN_REPLAY_SECONDS) problems.push(`replay_buffer_retention_seconds ${c.replayRetentionSeconds} is below the minimum of ${MIN_REPLAY_SECONDS} (pty-ws-v1 §8.2)`);
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
