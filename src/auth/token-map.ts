// The hash-only token map (docs/authentication.md: PTY_WS_TOKENS_FILE): its file format and the authenticator over it.
// Reading the file is the adapter's job; this module only parses text, so it stays portable.
import * as v from 'valibot';
import { BindingError } from '../protocol/errors.ts';
import { sha256Hex } from '../core/ids.ts';
import { describeIssue } from '../protocol/envelope.ts';
import type { Clock } from '../ports/clock.ts';
import type { Authenticator } from './authenticator.ts';
import { SCOPES, sessionRestriction, type Principal, type Scope } from './principal.ts';

/** Typos such as `expires` must not silently drop a restriction: unknown fields are errors. */
const strictMessage = (issue: v.StrictObjectIssue) => (issue.expected === 'never' ? 'unknown field (a typo?)' : 'must be a JSON object');

const TokenEntrySchema = v.strictObject({
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{64}$/, 'the hex SHA-256 of the raw token (64 hex digits)'), v.toLowerCase()),
  principal: v.pipe(v.string(), v.minLength(1, 'a non-empty principal name'), v.maxLength(256, 'at most 256 characters')),
  scopes: v.pipe(v.array(v.picklist(SCOPES, `one of ${SCOPES.join(', ')}`)), v.minLength(1, 'at least one scope')),
  sessions: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1, 'a session id or *'))), v.minLength(1, 'at least one session id, or ["*"]'))),
  expires_at: v.optional(v.pipe(v.string(), v.isoTimestamp('an ISO 8601 timestamp such as 2027-01-01T00:00:00Z'))),
}, strictMessage);

const TokenFileSchema = v.strictObject({ tokens: v.array(TokenEntrySchema) }, strictMessage);

export interface TokenEntry {
  /** Lowercase hex SHA-256 of the raw token. */
  sha256: string;
  principal: string;
  scopes: Scope[];
  /** Absent = every session. */
  sessions?: ReadonlySet<string>;
  /** ms since the epoch; absent = never expires. */
  expiresAt?: number;
}

/** A token map that cannot be used; the message names the problem, never a token. */
export class TokenMapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenMapError';
  }
}

/** Parses the token map file's text; throws TokenMapError naming the first problem and where it is. */
export function parseTokenMap(text: string): TokenEntry[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new TokenMapError(`not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const r = v.safeParse(TokenFileSchema, raw);
  if (!r.success) throw new TokenMapError(describeIssue(r.issues[0]));
  const seen = new Set<string>();
  return r.output.tokens.map((t, i) => {
    if (seen.has(t.sha256)) throw new TokenMapError(`tokens.${i}.sha256: the same hash appears twice`);
    seen.add(t.sha256);
    const entry: TokenEntry = { sha256: t.sha256, principal: t.principal, scopes: t.scopes };
    const sessions = sessionRestriction(t.sessions);
    if (sessions) entry.sessions = sessions;
    if (t.expires_at !== undefined) entry.expiresAt = Date.parse(t.expires_at);
    return entry;
  });
}

/** Tokens known only by their SHA-256, compared in constant time; the map can be swapped while running. */
export class TokenMapAuthenticator implements Authenticator {
  readonly enforced = true;

  constructor(
    private entries: readonly TokenEntry[],
    private readonly clock: Clock,
  ) {}

  /** A reloaded map: later authentications use it, open connections keep the principal they had. */
  replace(entries: readonly TokenEntry[]): void {
    this.entries = entries;
  }

  get size(): number {
    return this.entries.length;
  }

  async authenticate(token: string | null): Promise<Principal> {
    if (!token) throw new BindingError('UNAUTHENTICATED', 'a bearer token is required');
    const found = await this.lookup(token);
    if (!found) throw new BindingError('UNAUTHENTICATED', 'unknown bearer token');
    if (this.expired(found)) throw new BindingError('UNAUTHENTICATED', 'the bearer token has expired');
    return entryPrincipal(found);
  }

  /** The hash comes from our own records (a share's minter), not from a caller: no need to hide the time taken. */
  async byTokenSha256(sha256: string): Promise<Principal | undefined> {
    const found = this.entries.find((e) => e.sha256 === sha256);
    return found && !this.expired(found) ? entryPrincipal(found) : undefined;
  }

  private expired(e: TokenEntry): boolean {
    return e.expiresAt !== undefined && e.expiresAt <= this.clock.now();
  }

  async knows(token: string): Promise<boolean> {
    return (await this.lookup(token)) !== undefined;
  }

  /** Every entry is compared, whatever matches, so the time taken says nothing about the token. */
  async lookup(token: string): Promise<TokenEntry | undefined> {
    const digest = await sha256Hex(token);
    let found: TokenEntry | undefined;
    for (const e of this.entries) if (constantTimeEqual(e.sha256, digest)) found = e;
    return found;
  }
}

function entryPrincipal(e: TokenEntry): Principal {
  const p: Principal = { id: e.principal, scopes: new Set(e.scopes), tokenSha256: e.sha256 };
  if (e.sessions) p.sessions = e.sessions;
  if (e.expiresAt !== undefined) p.expiresAt = e.expiresAt;
  return p;
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
