// mTLS (docs/security.md, item 9): a client certificate verified during the TLS handshake against
// PTY_WS_TLS_CLIENT_CA names the caller. The CA is the identity provider: the principal is the
// certificate's subject CN, its scopes are the subject's OU values that name a scope
// (`OU=pty:control`), and it is valid until the certificate's notAfter.
import { BindingError } from '../protocol/errors.ts';
import type { Authenticator } from './authenticator.ts';
import type { ClientCertificate } from './certificate.ts';
import { SCOPES, type Principal, type Scope } from './principal.ts';

export function certificatePrincipal(cert: ClientCertificate, now: number): Principal {
  if (!cert.verified) throw new BindingError('UNAUTHENTICATED', `the client certificate is not trusted here: ${cert.reason}`);
  if (!cert.subjectCN) throw new BindingError('UNAUTHENTICATED', 'the client certificate has no subject CN to name its principal');
  if (!(cert.validTo > now)) throw new BindingError('UNAUTHENTICATED', 'the client certificate has expired');
  const scopes = new Set(cert.organizationalUnits.filter((ou): ou is Scope => (SCOPES as readonly string[]).includes(ou)));
  return { id: cert.subjectCN, scopes, expiresAt: cert.validTo };
}

/**
 * A bearer, when one is presented, is judged by the base authenticator alone, as without mTLS;
 * without one, a client certificate decides.
 * (A certificate that fails verification is refused, never silently ignored.)
 */
export class CertificateAuthenticator implements Authenticator {
  constructor(
    private readonly base: Authenticator,
    private readonly now: () => number,
  ) {}

  get enforced(): boolean {
    return this.base.enforced;
  }

  knows(token: string): Promise<boolean> {
    return this.base.knows?.(token) ?? Promise.resolve(false);
  }

  byTokenSha256(sha256: string): Promise<Principal | undefined> {
    return this.base.byTokenSha256?.(sha256) ?? Promise.resolve(undefined);
  }

  authenticate(token: string | null, certificate?: ClientCertificate): Promise<Principal> {
    if (token || !certificate || !this.base.enforced) return this.base.authenticate(token);
    return Promise.resolve().then(() => certificatePrincipal(certificate, this.now()));
  }
}
