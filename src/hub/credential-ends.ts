// Everything that must end with the credential it was opened with: pty-ws attachments and the A2A
// standard bindings' SSE streams alike, held by principal. docs/sharing.md: a revoked or expired
// share ends *every* connection at once; docs/authentication.md "Expiry mid-connection": so does a token map
// entry's `expires_at` or a JWT's `exp`. One registry, so revocation and expiry cannot cover
// different sets of connections.
import { onExpiry } from '../auth/expiry.ts';
import type { Principal } from '../auth/principal.ts';
import { BindingError } from '../protocol/errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';

/** A connection that ends from outside with a fatal UNAUTHENTICATED error (its transport says it how it can). */
export interface CredentialBound {
  readonly clientId: string;
  end(err: BindingError): void;
}

export interface CredentialEndsDeps {
  clock: Clock;
  logger: Logger;
}

export class CredentialEnds {
  private readonly byPrincipal = new Map<string, Set<CredentialBound>>();

  constructor(private readonly deps: CredentialEndsDeps) {}

  /**
   * Holds `conn` until the returned release is called (the connection ended on its own); when the
   * principal's credential expires first, ends it. `audit` is the connection's audit logger.
   */
  hold(principal: Principal, conn: CredentialBound, audit: Logger): () => void {
    let held = this.byPrincipal.get(principal.id);
    if (!held) this.byPrincipal.set(principal.id, (held = new Set()));
    held.add(conn);
    const expiry =
      principal.expiresAt === undefined
        ? null
        : onExpiry(principal.expiresAt, () => this.deps.clock.now(), () => {
            audit.log('info', 'audit.credential_expired', { client_id: conn.clientId });
            conn.end(new BindingError('UNAUTHENTICATED', 'the bearer token of this connection has expired: reconnect with a fresh one', { fatal: true }));
          });
    return () => {
      expiry?.cancel();
      const set = this.byPrincipal.get(principal.id);
      if (set?.delete(conn) && set.size === 0) this.byPrincipal.delete(principal.id);
    };
  }

  /**
   * Ends everything held for this principal (a revoked share) with `error`, a fatal UNAUTHENTICATED
   * one. Returns how many were ended.
   */
  endAll(principalId: string, error: BindingError): number {
    const ending = [...(this.byPrincipal.get(principalId) ?? [])];
    for (const conn of ending) {
      this.deps.logger.log('info', 'audit.credential_revoked', { principal: principalId, client_id: conn.clientId });
      conn.end(error);
    }
    return ending.length;
  }
}
