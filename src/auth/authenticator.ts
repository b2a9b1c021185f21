// Who is calling: bearer token → principal. Token sources and their checks live behind this port.
import { BindingError } from '../protocol/errors.ts';
import type { ClientCertificate } from './certificate.ts';
import { ANONYMOUS_ADMIN, type Principal } from './principal.ts';

export interface Authenticator {
  /** False when PTY_WS_AUTH=off: every caller is the trusted local principal. */
  readonly enforced: boolean;
  /**
   * The principal for a bearer token (or, with mTLS, the client certificate of the request when no
   * bearer is presented); throws UNAUTHENTICATED for a missing, unknown, expired or malformed one.
   */
  authenticate(token: string | null, certificate?: ClientCertificate): Promise<Principal>;
  /** True for a token this server issued or holds (a token map entry), whatever its state: used to spot one where it must not be. */
  knows?(token: string): Promise<boolean>;
  /**
   * The principal the token with this SHA-256 (a `Principal.tokenSha256`) authenticates as now;
   * undefined once it no longer does (gone from a reloaded token map, rotated, expired). Absent
   * where no principal carries a `tokenSha256`.
   */
  byTokenSha256?(sha256: string): Promise<Principal | undefined>;
}

export const NO_AUTH: Authenticator = {
  enforced: false,
  authenticate: async () => ANONYMOUS_ADMIN,
};

/** Three base64url segments: the compact form of a JWS. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/** A JWS whose first segment really is a JOSE header (`{"alg": ...}`): a JWT, not just a dotted word. */
export function isJwtShaped(value: string): boolean {
  if (!looksLikeJwt(value)) return false;
  const head = value.slice(0, value.indexOf('.')).replace(/-/g, '+').replace(/_/g, '/');
  try {
    const header: unknown = JSON.parse(atob(head + '='.repeat((4 - (head.length % 4)) % 4)));
    return typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string';
  } catch {
    return false;
  }
}

/**
 * The token map and JWTs together: a token the map knows is the map's; otherwise a JWT-shaped
 * token goes to the JWT verifier, whose refusal says more than "unknown token".
 */
export class CompositeAuthenticator implements Authenticator {
  readonly enforced = true;

  constructor(
    private readonly tokens: Authenticator & { lookup(token: string): Promise<unknown> },
    private readonly jwt: Authenticator,
  ) {}

  async knows(token: string): Promise<boolean> {
    return (await this.tokens.lookup(token)) !== undefined;
  }

  byTokenSha256(sha256: string): Promise<Principal | undefined> {
    return this.tokens.byTokenSha256?.(sha256) ?? Promise.resolve(undefined);
  }

  async authenticate(token: string | null): Promise<Principal> {
    if (!token) throw new BindingError('UNAUTHENTICATED', 'a bearer token is required');
    if ((await this.tokens.lookup(token)) !== undefined || !looksLikeJwt(token)) return this.tokens.authenticate(token);
    return this.jwt.authenticate(token);
  }
}
