// JWT bearers (docs/authentication.md): verified with jose against an HS256 secret, one public key or a JWKS URL.
// The algorithm allow-list is explicit and never contains `none`; `exp` is required, `nbf`, `iss`
// and `aud` are enforced (the last two when configured). Portable: Web Crypto and fetch only.
import { createRemoteJWKSet, importJWK, importSPKI, importX509, jwtVerify, type CryptoKey, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import { BindingError } from '../protocol/errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { Authenticator } from './authenticator.ts';
import { SCOPES, sessionRestriction, type Principal, type Scope } from './principal.ts';

/** Asymmetric algorithms accepted from a public key or a JWKS. */
export const PUBLIC_KEY_ALGORITHMS = ['RS256', 'ES256', 'EdDSA', 'Ed25519'] as const;
export const SECRET_ALGORITHMS = ['HS256'] as const;

export interface JwtSettings {
  /** HS256 shared secret. */
  secret?: string;
  /** The public key itself: PEM (SPKI or an X.509 certificate) or a JWK as JSON. */
  publicKey?: string;
  jwksUrl?: string;
  issuer?: string;
  audience?: string;
}

/** The JWT settings cannot work; the message names the setting. */
export class JwtConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JwtConfigError';
  }
}

type KeySource = { algorithms: string[]; key: Uint8Array | JWTVerifyGetKey };

/** Builds the verifier; key material is imported now so a bad key stops the start, not the first attach. */
export async function createJwtAuthenticator(settings: JwtSettings, clock: Clock, logger: Logger): Promise<JwtAuthenticator> {
  const sources = [settings.secret, settings.publicKey, settings.jwksUrl].filter((s) => s !== undefined);
  if (sources.length !== 1) throw new JwtConfigError('set exactly one of PTY_WS_JWT_SECRET, PTY_WS_JWT_PUBLIC_KEY and PTY_WS_JWKS_URL');
  let source: KeySource;
  if (settings.secret !== undefined) source = { algorithms: [...SECRET_ALGORITHMS], key: new TextEncoder().encode(settings.secret) };
  else if (settings.publicKey !== undefined) source = await publicKeySource(settings.publicKey);
  else source = { algorithms: [...PUBLIC_KEY_ALGORITHMS], key: createRemoteJWKSet(jwksUrl(settings.jwksUrl!), { timeoutDuration: 5000 }) };
  return new JwtAuthenticator(source, settings, clock, logger);
}

export class JwtAuthenticator implements Authenticator {
  readonly enforced = true;

  constructor(
    private readonly source: KeySource,
    private readonly settings: JwtSettings,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async authenticate(token: string | null): Promise<Principal> {
    if (!token) throw new BindingError('UNAUTHENTICATED', 'a bearer token is required');
    let payload: JWTPayload;
    try {
      const options: JWTVerifyOptions = {
        algorithms: this.source.algorithms,
        requiredClaims: ['exp'],
        currentDate: new Date(this.clock.now()),
        ...(this.settings.issuer !== undefined ? { issuer: this.settings.issuer } : {}),
        ...(this.settings.audience !== undefined ? { audience: this.settings.audience } : {}),
      };
      const { key } = this.source;
      ({ payload } = typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options));
    } catch (e) {
      throw this.refusal(e);
    }
    return principalFromClaims(payload);
  }

  /** A bad token is 401; a JWKS we cannot fetch is our fault, not the caller's. */
  private refusal(e: unknown): BindingError {
    const code = (e as { code?: unknown }).code;
    const reason = typeof code === 'string' ? TOKEN_FAULTS[code] : undefined;
    if (reason) return new BindingError('UNAUTHENTICATED', `invalid JWT: ${reason}`);
    this.logger.log('error', 'JWT verification failed on our side', { error: e });
    return new BindingError('INTERNAL', 'the bearer could not be verified right now');
  }
}

const TOKEN_FAULTS: Record<string, string> = {
  ERR_JWT_EXPIRED: 'it has expired',
  ERR_JWT_CLAIM_VALIDATION_FAILED: 'a claim did not validate (exp, nbf, iss or aud)',
  ERR_JWT_INVALID: 'not a well-formed JWT',
  ERR_JWS_INVALID: 'not a well-formed JWS',
  ERR_JOSE_ALG_NOT_ALLOWED: 'its algorithm is not accepted here',
  ERR_JOSE_NOT_SUPPORTED: 'its algorithm is not supported',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'the signature does not verify',
  ERR_JWKS_NO_MATCHING_KEY: 'no key in the JWKS matches it',
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: 'several keys in the JWKS match it',
  ERR_JWK_INVALID: 'its key is unusable',
};

function principalFromClaims(payload: JWTPayload): Principal {
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new BindingError('UNAUTHENTICATED', 'invalid JWT: it has no sub claim');
  const scope = payload.scope ?? '';
  if (typeof scope !== 'string') throw new BindingError('UNAUTHENTICATED', 'invalid JWT: the scope claim must be a space-separated string');
  const known = new Set<string>(SCOPES);
  const scopes = new Set(scope.split(' ').filter((s): s is Scope => known.has(s)));
  const sessions = payload.sessions;
  if (sessions !== undefined && !(Array.isArray(sessions) && sessions.every((s) => typeof s === 'string' && s !== ''))) {
    throw new BindingError('UNAUTHENTICATED', 'invalid JWT: the sessions claim must be an array of session ids');
  }
  const p: Principal = { id: payload.sub, scopes, expiresAt: payload.exp! * 1000 };
  const restriction = sessionRestriction(sessions as string[] | undefined);
  if (restriction) p.sessions = restriction;
  return p;
}

async function publicKeySource(material: string): Promise<KeySource> {
  const text = material.trim();
  let candidates: readonly string[] = PUBLIC_KEY_ALGORITHMS;
  let importKey: (alg: string) => Promise<CryptoKey>;
  if (text.startsWith('{')) {
    let jwk: Record<string, unknown>;
    try {
      jwk = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new JwtConfigError('PTY_WS_JWT_PUBLIC_KEY: the JWK is not valid JSON');
    }
    if ('d' in jwk || jwk.kty === 'oct') throw new JwtConfigError('PTY_WS_JWT_PUBLIC_KEY: give the public key, not a private or symmetric one (a secret goes in PTY_WS_JWT_SECRET)');
    if (typeof jwk.alg === 'string') candidates = [jwk.alg];
    importKey = async (alg) => (await importJWK({ ...jwk, alg }, alg)) as CryptoKey;
  } else if (text.startsWith('-----BEGIN CERTIFICATE-----')) {
    importKey = (alg) => importX509(text, alg);
  } else if (text.startsWith('-----BEGIN PUBLIC KEY-----')) {
    importKey = (alg) => importSPKI(text, alg);
  } else {
    throw new JwtConfigError('PTY_WS_JWT_PUBLIC_KEY: expected a PEM public key (-----BEGIN PUBLIC KEY-----), an X.509 certificate or a JWK');
  }
  // The key decides its algorithm: an RSA key verifies RS256 only, a P-256 key ES256 only, and so on.
  const keys = new Map<string, CryptoKey>();
  for (const alg of candidates) {
    if (!(PUBLIC_KEY_ALGORITHMS as readonly string[]).includes(alg)) continue;
    const key = await importKey(alg).catch(() => undefined);
    if (key) keys.set(alg, key);
  }
  if (keys.size === 0) throw new JwtConfigError(`PTY_WS_JWT_PUBLIC_KEY: not a key for any accepted algorithm (${PUBLIC_KEY_ALGORITHMS.join(', ')})`);
  return { algorithms: [...keys.keys()], key: async (header) => keys.get(header.alg)! };
}

function jwksUrl(raw: string): URL {
  try {
    const u = new URL(raw);
    if (u.protocol === 'https:' || u.protocol === 'http:') return u;
  } catch {
    // reported below
  }
  throw new JwtConfigError(`PTY_WS_JWKS_URL: expected an http(s) URL, got ${JSON.stringify(raw)}`);
}
