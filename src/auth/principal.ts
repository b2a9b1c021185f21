// Who is on the other end of a connection; fixed for the connection's life (docs/protocol.md §1.3).

export const SCOPES = ['pty:observe', 'pty:control', 'pty:admin'] as const;
export type Scope = (typeof SCOPES)[number];

export interface Principal {
  id: string;
  scopes: ReadonlySet<Scope>;
  /** The session ids this principal may attach to and see; absent = every session of this instance. */
  sessions?: ReadonlySet<string>;
  /** When its credential stops being valid (ms since the epoch); absent = never. */
  expiresAt?: number;
  /**
   * A share's: the principal (token, JWT or certificate) that minted the first share of its chain.
   * What the share holds open counts against that principal's limits too (docs/sharing.md).
   */
  rootMinter?: string;
  /**
   * The SHA-256 (hex) of the bearer token this principal stands on, where its authenticator can
   * tell later whether that token still authenticates (a token map entry, the dev token); for a
   * share, its root minter's (docs/sharing.md). Absent for JWTs and certificates: they end at `expiresAt`.
   */
  tokenSha256?: string;
  /**
   * The local operator's principal (the dev token of `pty-ws start`/`serve`): it may end every
   * session it may control, not only those it created, as it may type `exit` into any of them.
   * Never set for a share minted with it: a share has its own principal.
   */
  operator?: true;
  /** How its connections are named to the others (MembershipChanged) when their client names none: a share's label. */
  presenceLabel?: string;
}

const RANK: Record<Scope, number> = { 'pty:observe': 1, 'pty:control': 2, 'pty:admin': 3 };

/** `pty:admin` ⊃ `pty:control` ⊃ `pty:observe`. */
export function hasScope(p: Principal, needed: Scope): boolean {
  for (const s of p.scopes) if (RANK[s] >= RANK[needed]) return true;
  return false;
}

export function coversSession(p: Principal, sessionId: string): boolean {
  return p.sessions === undefined || p.sessions.has(sessionId);
}

/**
 * Whether `p` may end a session it covers (DELETE): `pty:admin`; or `pty:control` and being its
 * creator, or being the operator (who may control every session, the server's default one too).
 * An observer never may.
 */
export function mayEndSession(p: Principal, createdBy: string | null): boolean {
  if (hasScope(p, 'pty:admin')) return true;
  return hasScope(p, 'pty:control') && ((createdBy !== null && createdBy === p.id) || p.operator === true);
}

/** A `sessions` list from a token map entry or JWT claim: `*` anywhere means every session. */
export function sessionRestriction(list: readonly string[] | undefined): ReadonlySet<string> | undefined {
  return list === undefined || list.includes('*') ? undefined : new Set(list);
}

/** The principal of a connection when auth is off: trusted local development. */
export const ANONYMOUS_ADMIN: Principal = { id: 'anonymous', scopes: new Set<Scope>(['pty:admin']) };
