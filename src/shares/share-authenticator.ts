// Share tokens as bearers (docs/sharing.md): a token with the share prefix is looked up by its
// hash in the database; anything else goes to the configured authenticator. A share's principal
// may do, on its one session, what its scope allows, until it expires or is revoked.
import { BindingError } from '../errors.ts';
import { sha256Hex } from '../ids.ts';
import type { Clock, ShareRecord, ShareStore } from '../ports.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ClientCertificate } from '../auth/certificate.ts';
import type { Principal } from '../auth/principal.ts';
import { SHARE_TOKEN_PREFIX } from '../protocol/share-info.ts';


/** A share's principal id: its own (audit logs tell shares apart), never its minter's. */
export const sharePrincipalId = (shareId: string): string => `share:${shareId}`;

/** The share a principal id names (sharePrincipalId's inverse); undefined for any other principal. */
export const shareIdOf = (principalId: string): string | undefined => (principalId.startsWith('share:') ? principalId.slice('share:'.length) : undefined);

/** How many shares a chain of shares minted with shares may have above one: far more than anyone makes. */
const MAX_MINTED_DEPTH = 32;

/** The principal of a share: its scope, on its one session, until it expires. */
export function sharePrincipal(rec: ShareRecord, rootMinter: string): Principal {
  return { id: sharePrincipalId(rec.id), scopes: new Set([rec.scope]), sessions: new Set([rec.sessionId]), expiresAt: Date.parse(rec.expiresAt), rootMinter };
}

export class ShareAuthenticator implements Authenticator {
  constructor(
    private readonly base: Authenticator,
    private readonly shares: ShareStore,
    private readonly clock: Clock,
    private readonly instanceId: string,
  ) {}

  get enforced(): boolean {
    return this.base.enforced;
  }

  /** Anything shaped like a share token counts, valid or not: the prefix alone says it is a credential. */
  async knows(token: string): Promise<boolean> {
    return token.startsWith(SHARE_TOKEN_PREFIX) || ((await this.base.knows?.(token)) ?? false);
  }

  async authenticate(token: string | null, certificate?: ClientCertificate): Promise<Principal> {
    // With auth off every caller is trusted anyway; a share token then means nothing more.
    if (!this.base.enforced || !token?.startsWith(SHARE_TOKEN_PREFIX)) return this.base.authenticate(token, certificate);
    const rec = await this.shares.byTokenHash(await sha256Hex(token));
    if (!rec || rec.instanceId !== this.instanceId) throw new BindingError('UNAUTHENTICATED', 'unknown share token');
    this.#check(rec, 'this share link');
    return sharePrincipal(rec, await this.#checkMinters(rec));
  }

  #check(rec: ShareRecord, what: string): void {
    if (rec.revokedAt !== null) throw new BindingError('UNAUTHENTICATED', `${what} was revoked`);
    if (Date.parse(rec.expiresAt) <= this.clock.now()) throw new BindingError('UNAUTHENTICATED', `${what} has expired`);
  }

  /**
   * A share minted with a share ends with it (docs/sharing.md): every share above it must still
   * hold. Revoking one also revokes those minted with it (ShareService.revoke); this catches one
   * minted while that revocation was under way. Answers the chain's root minter: the principal
   * that minted its first share.
   */
  async #checkMinters(rec: ShareRecord): Promise<string> {
    let createdBy = rec.createdBy;
    let minter = shareIdOf(createdBy);
    for (let depth = 0; minter !== undefined; depth++) {
      const above = depth < MAX_MINTED_DEPTH ? await this.shares.byId(minter) : undefined;
      if (!above) throw new BindingError('UNAUTHENTICATED', 'the share link this one was minted with is gone');
      this.#check(above, 'the share link this one was minted with');
      createdBy = above.createdBy;
      minter = shareIdOf(createdBy);
    }
    return createdBy;
  }
}
