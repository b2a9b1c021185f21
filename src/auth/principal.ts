// Who is on the other end of a connection; fixed for the connection's life (pty-ws-v1 §7.2).

export type Scope = 'pty:observe' | 'pty:control' | 'pty:admin';

export interface Principal {
  id: string;
  scopes: ReadonlySet<Scope>;
}

const RANK: Record<Scope, number> = { 'pty:observe': 1, 'pty:control': 2, 'pty:admin': 3 };

/** `pty:admin` ⊃ `pty:control` ⊃ `pty:observe`. */
export function hasScope(p: Principal, needed: Scope): boolean {
  for (const s of p.scopes) if (RANK[s] >= RANK[needed]) return true;
  return false;
}

/** The principal of a connection when auth is off: trusted local development. */
export const ANONYMOUS_ADMIN: Principal = { id: 'anonymous', scopes: new Set<Scope>(['pty:admin']) };
