// Who is calling: bearer token → principal. Token sources and their checks live behind this port.
import { BindingError } from '../errors.ts';
import { sha256Hex } from '../ids.ts';
import { ANONYMOUS_ADMIN, type Principal, type Scope } from './principal.ts';

export interface Authenticator {
  /** False when PTY_WS_AUTH=off: every caller is the trusted local principal. */
  readonly enforced: boolean;
  /** The principal for a bearer token; throws UNAUTHENTICATED for a missing or unknown one. */
  authenticate(token: string | null): Promise<Principal>;
}

export interface TokenEntry {
  sha256: string;
  principal: string;
  scopes: Scope[];
}

/** Tokens known only by their SHA-256, compared in constant time. */
export class HashedTokenAuthenticator implements Authenticator {
  readonly enforced = true;

  constructor(private readonly entries: TokenEntry[]) {}

  async authenticate(token: string | null): Promise<Principal> {
    if (!token) throw new BindingError('UNAUTHENTICATED', 'a bearer token is required');
    const digest = await sha256Hex(token);
    let found: TokenEntry | undefined;
    for (const e of this.entries) if (constantTimeEqual(e.sha256, digest)) found = e;
    if (!found) throw new BindingError('UNAUTHENTICATED', 'unknown bearer token');
    return { id: found.principal, scopes: new Set(found.scopes) };
  }
}

export const NO_AUTH: Authenticator = {
  enforced: false,
  authenticate: async () => ANONYMOUS_ADMIN,
};

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
