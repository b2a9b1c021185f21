// Token map files and JWTs for tests: real SHA-256 hashes, real jose signatures.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { SignJWT } from 'jose';

export interface TestToken {
  token: string;
  principal: string;
  scopes: string[];
  sessions?: string[];
  expires_at?: string;
}

export const newToken = (): string => randomBytes(24).toString('base64url');

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Writes a PTY_WS_TOKENS_FILE holding only the hashes of the given tokens. */
export function writeTokenFile(path: string, tokens: TestToken[]): void {
  const entries = tokens.map(({ token, ...rest }) => ({ sha256: sha256(token), ...rest }));
  writeFileSync(path, JSON.stringify({ tokens: entries }, null, 2));
}

export interface Claims {
  sub?: string;
  scope?: string;
  sessions?: string[];
  iss?: string;
  aud?: string;
  /** Seconds since the epoch; default: an hour from now. null = no exp claim. */
  exp?: number | null;
  nbf?: number;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** A signed JWT: HS256 with a secret (Uint8Array) or the given algorithm with a private key. */
export async function signJwt(claims: Claims, key: Uint8Array | CryptoKey, alg = 'HS256', kid?: string): Promise<string> {
  const { exp = nowSeconds() + 3600, nbf, iss, aud, sub, ...rest } = claims;
  const jwt = new SignJWT({ ...rest }).setProtectedHeader(kid ? { alg, kid } : { alg }).setIssuedAt();
  if (sub !== undefined) jwt.setSubject(sub);
  if (exp !== null) jwt.setExpirationTime(exp);
  if (nbf !== undefined) jwt.setNotBefore(nbf);
  if (iss !== undefined) jwt.setIssuer(iss);
  if (aud !== undefined) jwt.setAudience(aud);
  return jwt.sign(key);
}

/** An unsigned `alg: none` token, which no verifier here may accept. */
export function unsignedJwt(claims: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ exp: nowSeconds() + 3600, ...claims })}.`;
}
