// Share links (docs/sharing.md), of which only the hash is kept.
/** A share link (docs/sharing.md): a bearer for one session, of which only the hash is kept. */
export interface ShareRecord {
  id: string;
  sessionId: string;
  instanceId: string;
  tokenSha256: string;
  scope: 'pty:observe' | 'pty:control';
  label: string | null;
  /** The principal that minted it. */
  createdBy: string;
  /**
   * The SHA-256 of the bearer token its root minter (the first above it that is no share) stood
   * on, where that token can be checked later (token map, dev token): the share holds only while
   * it still authenticates. Null for a JWT or certificate minter, which bounds `expiresAt` instead.
   */
  minterTokenSha256: string | null;
  /** ISO-8601 UTC. */
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

export interface ShareStore {
  create(rec: ShareRecord): Promise<void>;
  /** The share whose token has this hash, revoked or not. */
  byTokenHash(tokenSha256: string): Promise<ShareRecord | undefined>;
  /** The share with this id, revoked or not. */
  byId(shareId: string): Promise<ShareRecord | undefined>;
  /** The session's shares that are neither revoked nor expired at `now` (ms), oldest first. */
  listActive(sessionId: string, now: number): Promise<ShareRecord[]>;
  /** Marks it revoked; false when the session has no such share, or it was revoked already. */
  revoke(sessionId: string, shareId: string, at: string): Promise<boolean>;
  /** The instance's shares that are neither revoked nor expired at `now` (ms), only those `createdBy` minted when given; oldest first. */
  listInstanceActive(instanceId: string, now: number, createdBy?: string): Promise<ShareRecord[]>;
}
