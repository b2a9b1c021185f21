// Minting, listing and revoking share links (docs/sharing.md). A share never grants more than its
// minter has: not a wider scope, not another session, not a longer life than the minter's own
// credential. Revoking one ends its connections at once.
import * as v from 'valibot';
import { hasScope, type Principal } from '../auth/principal.ts';
import { BindingError } from '../protocol/errors.ts';
import { randomToken, sha256Hex, uuidv7 } from '../core/ids.ts';
import { describeIssue } from '../protocol/envelope.ts';
import type { Clock } from '../ports/clock.ts';
import type { ShareRecord, ShareStore } from '../ports/share-store.ts';
import { SHARE_REVOKED, SHARE_TOKEN_PREFIX } from '../protocol/share-info.ts';
import { sharePrincipalId, shareRefused } from './share-authenticator.ts';

export const MAX_SHARE_SECONDS = 604_800;
const DEFAULT_SHARE_SECONDS = 3600;

export const MintShare = v.object({
  scope: v.optional(v.picklist(['pty:observe', 'pty:control'], 'scope must be "pty:observe" or "pty:control"'), 'pty:observe'),
  expires_in: v.optional(v.pipe(v.number('expires_in must be a number of seconds'), v.integer(), v.minValue(1), v.maxValue(MAX_SHARE_SECONDS, `expires_in is at most ${MAX_SHARE_SECONDS} seconds (7 days)`)), DEFAULT_SHARE_SECONDS),
  label: v.optional(v.pipe(v.string(), v.maxLength(128))),
});

export interface ShareServiceDeps {
  store: ShareStore;
  clock: Clock;
  instanceId: string;
  /** Ends every connection authenticated as this principal (4401). */
  /** Ends every connection of the principal with `error`, a fatal UNAUTHENTICATED one. */
  endConnections(principalId: string, error: BindingError): void;
}

/**
 * Share links a session may have active (neither revoked nor expired) at once: a bearer that may
 * mint cannot mint without end, each one a row every listing reads (docs/sharing.md).
 */
export const MAX_ACTIVE_SHARES = 100;

export class ShareService {
  /** Mints run one at a time, so that concurrent ones cannot all pass the count. */
  private minting: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ShareServiceDeps) {}

  /** Mints a share of `sessionId` for `minter`; the token is returned only here. */
  async mint(minter: Principal, sessionId: string, body: unknown): Promise<{ share: ShareRecord; token: string }> {
    const r = v.safeParse(MintShare, body ?? {});
    if (!r.success) throw new BindingError('INVALID_REQUEST', describeIssue(r.issues[0]));
    const { scope, expires_in, label } = r.output;
    if (!hasScope(minter, scope)) throw new BindingError('PERMISSION_DENIED', `a share cannot grant ${scope}: this bearer does not have it`);
    const counted = this.minting.then(async () => {
      const active = await this.deps.store.listActive(sessionId, this.deps.clock.now());
      if (active.length >= MAX_ACTIVE_SHARES) {
        throw new BindingError('RATE_LIMITED', `session ${sessionId} already has ${active.length} active share links (at most ${MAX_ACTIVE_SHARES}): revoke some first`);
      }
      return this.create(minter, sessionId, scope, expires_in, label);
    });
    this.minting = counted.catch(() => undefined);
    return counted;
  }

  private async create(minter: Principal, sessionId: string, scope: ShareRecord['scope'], expires_in: number, label: string | undefined): Promise<{ share: ShareRecord; token: string }> {
    const now = this.deps.clock.now();
    // Never outliving the credential that minted it.
    const expiresAt = Math.min(now + expires_in * 1000, minter.expiresAt ?? Infinity);
    const token = `${SHARE_TOKEN_PREFIX}${randomToken()}`;
    const share: ShareRecord = {
      id: uuidv7(now),
      sessionId,
      instanceId: this.deps.instanceId,
      tokenSha256: await sha256Hex(token),
      scope,
      label: label ?? null,
      createdBy: minter.id,
      minterTokenSha256: minter.tokenSha256 ?? null,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(expiresAt).toISOString(),
      revokedAt: null,
    };
    await this.deps.store.create(share);
    return { share, token };
  }

  list(sessionId: string): Promise<ShareRecord[]> {
    return this.deps.store.listActive(sessionId, this.deps.clock.now());
  }

  /**
   * False when the session has no such active share. The shares minted with it go too, and theirs
   * (docs/sharing.md: a share minted with a share ends with it), each ending its connections.
   */
  async revoke(sessionId: string, shareId: string): Promise<boolean> {
    const at = new Date(this.deps.clock.now()).toISOString();
    const done = await this.deps.store.revoke(sessionId, shareId, at);
    if (!done) return false;
    const ending = [shareId];
    for (let next = ending.pop(); next !== undefined; next = ending.pop()) {
      if (next !== shareId && !(await this.deps.store.revoke(sessionId, next, at))) continue;
      this.deps.endConnections(sharePrincipalId(next), shareRefused(SHARE_REVOKED, next === shareId ? 'the share link of this connection was revoked' : "the share link this connection's share was minted with was revoked"));
      const minted = (await this.list(sessionId)).filter((s) => s.createdBy === sharePrincipalId(next));
      ending.push(...minted.map((s) => s.id));
    }
    return true;
  }

  /** Revokes every active share of this instance `principalId` minted (and those minted with them); resolves with how many it minted. */
  async revokeAllBy(principalId: string): Promise<number> {
    let revoked = 0;
    for (const s of await this.deps.store.listInstanceActive(this.deps.instanceId, this.deps.clock.now(), principalId)) {
      if (await this.revoke(s.sessionId, s.id)) revoked++;
    }
    return revoked;
  }

  /**
   * Ends the connections of every active share that no longer `holds` (its root minter's token
   * left the token map, or lost the scope): they are refused from now on, not revoked, so a token
   * put back makes them work again. Resolves with the shares whose connections were ended.
   */
  async endOrphaned(holds: (share: ShareRecord) => Promise<boolean>): Promise<string[]> {
    const ended: string[] = [];
    for (const s of await this.deps.store.listInstanceActive(this.deps.instanceId, this.deps.clock.now())) {
      if (s.minterTokenSha256 === null || (await holds(s))) continue;
      this.deps.endConnections(sharePrincipalId(s.id), new BindingError('UNAUTHENTICATED', 'the bearer token this share link was minted with no longer authenticates', { fatal: true }));
      ended.push(s.id);
    }
    return ended;
  }
}
