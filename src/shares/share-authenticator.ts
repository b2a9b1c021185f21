// Share tokens as bearers (docs/sharing.md): a token with the share prefix is looked up by its
// hash in the database; anything else goes to the configured authenticator. A share's principal
// may do, on its one session, what its scope allows, until it expires or is revoked, and only
// while the token its root minter stood on still authenticates with that scope on that session.
import { BindingError } from '../protocol/errors.ts';
import { sha256Hex } from '../core/ids.ts';
import type { Clock } from '../ports/clock.ts';
import type { ShareRecord, ShareStore } from '../ports/share-store.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ClientCertificate } from '../auth/certificate.ts';
import { coversSession, hasScope, type Principal } from '../auth/principal.ts';
import { SHARE_EXPIRED, SHARE_REVOKED, SHARE_TOKEN_PREFIX } from '../protocol/share-info.ts';


/** A share refused for `reason` (fatal: a live connection with it ends, 4401). */
export function shareRefused(reason: typeof SHARE_REVOKED | typeof SHARE_EXPIRED, message: string): BindingError {
  return new BindingError('UNAUTHENTICATED', message, { metadata: { reason }, extra: { reason }, fatal: true });
}

/** How a share's connections are named to others when their client names none: its label, else this. */
const UNLABELLED_SHARE = 'guest';

/** A share's principal id: its own (audit logs tell shares apart), never its minter's. */
export const sharePrincipalId = (shareId: string): string => `share:${shareId}`;

/** The share a principal id names (sharePrincipalId's inverse); undefined for any other principal. */
export const shareIdOf = (principalId: string): string | undefined => (principalId.startsWith('share:') ? principalId.slice('share:'.length) : undefined);

/** How many shares a chain of shares minted with shares may have above one: far more than anyone makes. */
const MAX_MINTED_DEPTH = 32;

/** The principal of a share: its scope, on its one session, until it expires. */
export function sharePrincipal(rec: ShareRecord, rootMinter: string): Principal {
  const p: Principal = {
    id: sharePrincipalId(rec.id),
    scopes: new Set([rec.scope]),
    sessions: new Set([rec.sessionId]),
    expiresAt: Date.parse(rec.expiresAt),
    rootMinter,
    presenceLabel: rec.label ?? UNLABELLED_SHARE,
  };
  // A share minted with this one stands on the same root token.
  if (rec.minterTokenSha256 !== null) p.tokenSha256 = rec.minterTokenSha256;
  return p;
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
    return sharePrincipal(rec, await this.#checkAll(rec));
  }

  byTokenSha256(sha256: string): Promise<Principal | undefined> {
    return this.base.byTokenSha256?.(sha256) ?? Promise.resolve(undefined);
  }

  /** Whether the share would still authenticate (after a token map reload: ShareService.endOrphaned). */
  holds(rec: ShareRecord): Promise<boolean> {
    return this.#checkAll(rec).then(
      () => true,
      (e: unknown) => {
        if (e instanceof BindingError && e.code === 'UNAUTHENTICATED') return false;
        throw e;
      },
    );
  }

  /** Every check; answers the chain's root minter. */
  async #checkAll(rec: ShareRecord): Promise<string> {
    this.#check(rec, 'this share link');
    const rootMinter = await this.#checkMinters(rec);
    await this.#checkRoot(rec);
    return rootMinter;
  }

  #check(rec: ShareRecord, what: string): void {
    if (rec.revokedAt !== null) throw shareRefused(SHARE_REVOKED, `${what} was revoked`);
    if (Date.parse(rec.expiresAt) <= this.clock.now()) throw shareRefused(SHARE_EXPIRED, `${what} has expired`);
  }

  /**
   * The token the root minter stood on must still authenticate, and still hold the share's scope on
   * its session (docs/sharing.md): removed from the token map, rotated or narrowed, the share ends.
   * A share without one (a JWT or certificate minter) is bounded by that credential's expiry instead.
   */
  async #checkRoot(rec: ShareRecord): Promise<void> {
    if (rec.minterTokenSha256 === null) return;
    const root = await this.base.byTokenSha256?.(rec.minterTokenSha256);
    if (!root) throw new BindingError('UNAUTHENTICATED', 'the bearer token this share link was minted with no longer authenticates');
    if (!hasScope(root, rec.scope) || !coversSession(root, rec.sessionId)) {
      throw new BindingError('UNAUTHENTICATED', `the bearer token this share link was minted with no longer has ${rec.scope} on its session`);
    }
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
