// Who is calling: bearer token → principal. Token sources and their checks live behind this port.
import { BindingError } from '../errors.ts';
import type { ClientCertificate } from './client-certificate.ts';
import { ANONYMOUS_ADMIN, type Principal } from './principal.ts';

export interface Authenticator {
  /** False when PTY_WS_AUTH=off: every caller is the trusted local principal. */
  readonly enforced: boolean;
  /**
   * The principal for a bearer token (or, with mTLS, the client certificate of the request when no
   * bearer is presented); throws UNAUTHENTICATED for a missing, unknown, expired or malformed one.
   */
  authenticate(token: string | null, certificate?: ClientCertificate): Promise<Principal>;
}

export const NO_AUTH: Authenticator = {
  enforced: false,
  authenticate: async () => ANONYMOUS_ADMIN,
};

/** Three base64url segments: the compact form of a JWS. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
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

  async authenticate(token: string | null): Promise<Principal> {
    if (!token) throw new BindingError('UNAUTHENTICATED', 'a bearer token is required');
    if ((await this.tokens.lookup(token)) !== undefined || !looksLikeJwt(token)) return this.tokens.authenticate(token);
    return this.jwt.authenticate(token);
  }
}
