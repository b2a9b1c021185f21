// Unit tests of the portable auth modules: token map parsing, JWT verification with real keys and a
// real JWKS over HTTP, the composite, attach admission, JSON depth, start-up policy, expiry timers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AttachAdmission } from '../../src/auth/admission.ts';
import { CompositeAuthenticator } from '../../src/auth/authenticator.ts';
import { onExpiry } from '../../src/auth/expiry.ts';
import type { Principal, Scope } from '../../src/auth/principal.ts';
import { createJwtAuthenticator, JwtConfigError, type JwtSettings } from '../../src/auth/jwt.ts';
import { securityProblems } from '../../src/auth/startup-policy.ts';
import { parseTokenMap, TokenMapAuthenticator, TokenMapError } from '../../src/auth/token-map.ts';
import { loadConfig } from '../../src/core/config.ts';
import { BindingError } from '../../src/protocol/errors.ts';
import { nestsDeeperThan } from '../../src/protocol/json-depth.ts';
import { decodeClientFrame } from '../../src/protocol/envelope.ts';
import type { Logger } from '../../src/ports/logger.ts';
import { newToken, nowSeconds, sha256, signJwt, unsignedJwt } from '../helpers/tokens.ts';

const clock = { now: () => Date.now() };
const logs: string[] = [];
const logger: Logger = { log: (_l, msg, f) => void logs.push(JSON.stringify({ msg, ...f })), child: () => logger };
const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
const secretKey = new TextEncoder().encode(SECRET);

async function refusal(p: Promise<unknown>): Promise<BindingError> {
  const e = await p.then(
    () => new Error('expected a refusal'),
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(BindingError);
  return e as BindingError;
}

describe('token map file', () => {
  const hash = 'A'.repeat(64);

  it('parses entries: hashes lowercased, * sessions = all, expiry as a time', () => {
    const entries = parseTokenMap(
      JSON.stringify({
        tokens: [
          { sha256: hash, principal: 'alice', scopes: ['pty:control'], sessions: ['*'], expires_at: '2027-01-01T00:00:00Z' },
          { sha256: 'b'.repeat(64), principal: 'bob', scopes: ['pty:observe'], sessions: ['s1', 's2'] },
        ],
      }),
    );
    expect(entries[0]).toEqual({ sha256: 'a'.repeat(64), principal: 'alice', scopes: ['pty:control'], expiresAt: Date.parse('2027-01-01T00:00:00Z') });
    expect([...entries[1]!.sessions!]).toEqual(['s1', 's2']);
    expect(entries[1]!.expiresAt).toBeUndefined();
  });

  it.each([
    ['{"tokens": [', /not valid JSON/],
    ['{"tokenz": []}', /tokens is required/],
    [`{"tokens": [{"sha256": "abc", "principal": "a", "scopes": ["pty:control"]}]}`, /tokens\.0\.sha256: .*64 hex/],
    [`{"tokens": [{"sha256": "${hash}", "principal": "a", "scopes": ["pty:root"]}]}`, /tokens\.0\.scopes\.0: one of pty:observe, pty:control, pty:admin/],
    [`{"tokens": [{"sha256": "${hash}", "principal": "a", "scopes": []}]}`, /tokens\.0\.scopes: at least one scope/],
    [`{"tokens": [{"sha256": "${hash}", "scopes": ["pty:control"]}]}`, /tokens\.0\.principal is required/],
    [`{"tokens": [{"sha256": "${hash}", "principal": "a", "scopes": ["pty:control"], "expires": "2027-01-01T00:00:00Z"}]}`, /tokens\.0\.expires: unknown field/],
    [`{"tokens": [{"sha256": "${hash}", "principal": "a", "scopes": ["pty:control"], "expires_at": "soon"}]}`, /tokens\.0\.expires_at: an ISO 8601 timestamp/],
    [`{"tokens": [{"sha256": "${hash}", "principal": "a", "scopes": ["pty:control"]}, {"sha256": "${hash}", "principal": "b", "scopes": ["pty:observe"]}]}`, /tokens\.1\.sha256: the same hash appears twice/],
  ])('refuses %s naming the problem', (text, message) => {
    expect(() => parseTokenMap(text)).toThrowError(TokenMapError);
    expect(() => parseTokenMap(text)).toThrowError(message);
  });

  it('authenticates by hash, refuses unknown, empty and expired tokens with UNAUTHENTICATED, and swaps maps', async () => {
    const good = newToken();
    const old = newToken();
    const auth = new TokenMapAuthenticator(
      [
        { sha256: sha256(good), principal: 'alice', scopes: ['pty:observe'], sessions: new Set(['s1']), expiresAt: Date.now() + 60_000 },
        { sha256: sha256(old), principal: 'old', scopes: ['pty:control'], expiresAt: Date.now() - 1 },
      ],
      clock,
    );
    const p = await auth.authenticate(good);
    expect(p).toMatchObject({ id: 'alice', sessions: new Set(['s1']) });
    expect([...p.scopes]).toEqual(['pty:observe']);
    expect((await refusal(auth.authenticate(old))).message).toMatch(/expired/);
    expect((await refusal(auth.authenticate('nope'))).code).toBe('UNAUTHENTICATED');
    expect((await refusal(auth.authenticate(null))).code).toBe('UNAUTHENTICATED');
    auth.replace([{ sha256: sha256(old), principal: 'renewed', scopes: ['pty:control'] }]);
    expect((await auth.authenticate(old)).id).toBe('renewed');
    expect((await refusal(auth.authenticate(good))).code).toBe('UNAUTHENTICATED');
  });
});

describe('JWT bearers', () => {
  const hs = (settings: Partial<JwtSettings> = {}) => createJwtAuthenticator({ secret: SECRET, ...settings }, clock, logger);

  it('maps sub, scope and sessions to the principal, with exp as its expiry', async () => {
    const exp = nowSeconds() + 600;
    const p = await (await hs()).authenticate(await signJwt({ sub: 'ann', scope: 'openid pty:observe pty:control', sessions: ['s1'], exp }, secretKey));
    expect(p.id).toBe('ann');
    expect([...p.scopes].sort()).toEqual(['pty:control', 'pty:observe']);
    expect([...p.sessions!]).toEqual(['s1']);
    expect(p.expiresAt).toBe(exp * 1000);
    const all = await (await hs()).authenticate(await signJwt({ sub: 'ann', scope: 'pty:admin', sessions: ['*'] }, secretKey));
    expect(all.sessions).toBeUndefined();
  });

  it('refuses alg none, a wrong key, expiry, a future nbf, a missing exp or sub and bad claim types with UNAUTHENTICATED', async () => {
    const auth = await hs();
    const wrongKey = new TextEncoder().encode('another-secret-of-a-respectable-length!!');
    const cases: Array<[string, Promise<string> | string, RegExp]> = [
      ['alg none', unsignedJwt({ sub: 'x', scope: 'pty:admin' }), /algorithm is not accepted/],
      ['wrong key', signJwt({ sub: 'x', scope: 'pty:control' }, wrongKey), /signature/],
      ['expired', signJwt({ sub: 'x', scope: 'pty:control', exp: nowSeconds() - 5 }, secretKey), /expired/],
      ['not yet valid', signJwt({ sub: 'x', scope: 'pty:control', nbf: nowSeconds() + 600 }, secretKey), /claim/],
      ['no exp', signJwt({ sub: 'x', scope: 'pty:control', exp: null }, secretKey), /claim/],
      ['no sub', signJwt({ scope: 'pty:control' }, secretKey), /sub/],
      ['scope not a string', signJwt({ sub: 'x', scope: ['pty:control'] as unknown as string }, secretKey), /scope/],
      ['sessions not a list', signJwt({ sub: 'x', scope: 'pty:control', sessions: 's1' as unknown as string[] }, secretKey), /sessions/],
      ['garbage', 'not.a.jwt', /well-formed/],
    ];
    for (const [what, token, message] of cases) {
      const err = await refusal(auth.authenticate(await token));
      expect(err.code, what).toBe('UNAUTHENTICATED');
      expect(err.message, what).toMatch(message);
    }
  });

  it('enforces iss and aud when configured', async () => {
    const auth = await hs({ issuer: 'https://idp.example', audience: 'pty-ws' });
    expect((await auth.authenticate(await signJwt({ sub: 'x', scope: 'pty:control', iss: 'https://idp.example', aud: 'pty-ws' }, secretKey))).id).toBe('x');
    for (const claims of [{ iss: 'https://evil.example', aud: 'pty-ws' }, { iss: 'https://idp.example', aud: 'other' }, { aud: 'pty-ws' }]) {
      expect((await refusal(auth.authenticate(await signJwt({ sub: 'x', scope: 'pty:control', ...claims }, secretKey)))).code).toBe('UNAUTHENTICATED');
    }
  });

  it.each([
    ['RS256', 'PEM'],
    ['ES256', 'JWK'],
    ['EdDSA', 'PEM'],
  ] as const)('verifies %s with a %s public key and refuses other algorithms and keys', async (alg, form) => {
    const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
    const material = form === 'PEM' ? await exportSPKI(publicKey) : JSON.stringify(await exportJWK(publicKey));
    const auth = await createJwtAuthenticator({ publicKey: material }, clock, logger);
    expect((await auth.authenticate(await signJwt({ sub: 'k', scope: 'pty:observe' }, privateKey, alg))).id).toBe('k');
    const other = await generateKeyPair(alg, { extractable: true });
    expect((await refusal(auth.authenticate(await signJwt({ sub: 'k', scope: 'pty:observe' }, other.privateKey, alg)))).code).toBe('UNAUTHENTICATED');
    // An HS256 token "signed" with the public key's text (the classic key-confusion attack) is refused.
    expect((await refusal(auth.authenticate(await signJwt({ sub: 'k', scope: 'pty:admin' }, new TextEncoder().encode(material))))).message).toMatch(/algorithm/);
  });

  it('refuses unusable key settings at construction, naming the setting', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const p384 = await generateKeyPair('ES384', { extractable: true });
    const bad: Array<[JwtSettings, RegExp]> = [
      [{}, /exactly one of/],
      [{ secret: SECRET, jwksUrl: 'https://idp.example/jwks' }, /exactly one of/],
      [{ publicKey: JSON.stringify(await exportJWK(privateKey)) }, /PTY_WS_JWT_PUBLIC_KEY: give the public key/],
      [{ publicKey: await exportSPKI(p384.publicKey) }, /PTY_WS_JWT_PUBLIC_KEY: not a key for any accepted algorithm/],
      [{ publicKey: 'hello' }, /PTY_WS_JWT_PUBLIC_KEY: expected a PEM/],
      [{ jwksUrl: 'ftp://idp.example/jwks' }, /PTY_WS_JWKS_URL/],
    ];
    for (const [settings, message] of bad) {
      await expect(createJwtAuthenticator(settings, clock, logger)).rejects.toThrowError(JwtConfigError);
      await expect(createJwtAuthenticator(settings, clock, logger)).rejects.toThrowError(message);
    }
  });

  describe('from a JWKS URL', () => {
    let server: Server;
    let jwks: { keys: unknown[] } = { keys: [] };
    let serving = true;
    let url = '';
    let keyA: CryptoKey;
    let keyB: CryptoKey;

    beforeAll(async () => {
      const a = await generateKeyPair('ES256', { extractable: true });
      const b = await generateKeyPair('RS256', { extractable: true });
      keyA = a.privateKey;
      keyB = b.privateKey;
      jwks = { keys: [{ ...(await exportJWK(a.publicKey)), kid: 'a', alg: 'ES256', use: 'sig' }] };
      server = createServer((req, res) => {
        if (!serving) {
          res.writeHead(503).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
      jwks.keys.push({ ...(await exportJWK(b.publicKey)), kid: 'b', alg: 'RS256', use: 'sig' });
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('verifies tokens signed by any key of the set, selected by kid, and refuses unknown keys', async () => {
      const auth = await createJwtAuthenticator({ jwksUrl: url }, clock, logger);
      expect((await auth.authenticate(await signJwt({ sub: 'a', scope: 'pty:control' }, keyA, 'ES256', 'a'))).id).toBe('a');
      expect((await auth.authenticate(await signJwt({ sub: 'b', scope: 'pty:control' }, keyB, 'RS256', 'b'))).id).toBe('b');
      const stranger = await generateKeyPair('ES256');
      expect((await refusal(auth.authenticate(await signJwt({ sub: 'c', scope: 'pty:control' }, stranger.privateKey, 'ES256', 'a')))).code).toBe('UNAUTHENTICATED');
      expect((await refusal(auth.authenticate(await signJwt({ sub: 'c', scope: 'pty:control' }, stranger.privateKey, 'ES256', 'zzz')))).message).toMatch(/no key in the JWKS/);
    });

    it('answers INTERNAL, not 401, when the JWKS cannot be fetched, and logs why', async () => {
      serving = false;
      try {
        const auth = await createJwtAuthenticator({ jwksUrl: url }, clock, logger);
        const err = await refusal(auth.authenticate(await signJwt({ sub: 'a', scope: 'pty:control' }, keyA, 'ES256', 'a')));
        expect(err.code).toBe('INTERNAL');
        expect(logs.some((l) => l.includes('JWT verification failed on our side'))).toBe(true);
      } finally {
        serving = true;
      }
    });
  });

  it('composite: the token map answers for its tokens, JWTs go to the verifier with its reasons', async () => {
    const raw = newToken();
    const auth = new CompositeAuthenticator(new TokenMapAuthenticator([{ sha256: sha256(raw), principal: 'mapped', scopes: ['pty:observe'] }], clock), await hs());
    expect((await auth.authenticate(raw)).id).toBe('mapped');
    expect((await auth.authenticate(await signJwt({ sub: 'jwt-user', scope: 'pty:control' }, secretKey))).id).toBe('jwt-user');
    expect((await refusal(auth.authenticate('unknown-opaque-token'))).message).toBe('unknown bearer token');
    expect((await refusal(auth.authenticate(await signJwt({ sub: 'x', scope: 'pty:control', exp: nowSeconds() - 1 }, secretKey)))).message).toMatch(/expired/);
  });
});

describe('attach admission', () => {
  let t = 0;
  const admission = (adminReserved = 0) => new AttachAdmission({ perPrincipal: 2, perInstance: 3, adminReserved, attemptsPerSecond: 5 }, () => t);
  const who = (id: string, scope: Scope = 'pty:control', rootMinter?: string): Principal => ({ id, scopes: new Set([scope]), ...(rootMinter === undefined ? {} : { rootMinter }) });

  it('limits open attaches per principal and per instance; a closed one frees its slot', () => {
    const a = admission();
    const x1 = a.admit(who('x'));
    a.admit(who('x'));
    expect(() => a.admit(who('x'))).toThrowError(/PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL=2/);
    a.admit(who('y'));
    expect(() => a.admit(who('z'))).toThrowError(/PTY_WS_MAX_CONNECTIONS_PER_INSTANCE=3/);
    x1.opened();
    x1.closed();
    x1.closed();
    expect(() => a.admit(who('z'))).not.toThrow();
  });

  it('limits upgrade attempts per principal per second in a sliding window', () => {
    t = 1000;
    const a = new AttachAdmission({ perPrincipal: 100, perInstance: 100, adminReserved: 0, attemptsPerSecond: 5 }, () => t);
    for (let i = 0; i < 5; i++) a.admit(who('x')).closed();
    const err = (() => {
      try {
        a.admit(who('x'));
      } catch (e) {
        return e as BindingError;
      }
    })();
    expect(err?.code).toBe('RATE_LIMITED');
    expect(() => a.admit(who('other'))).not.toThrow();
    t += 999;
    expect(() => a.admit(who('x'))).toThrow();
    t += 1;
    expect(() => a.admit(who('x'))).not.toThrow();
  });

  it('drops a slot whose socket never opened after a while', () => {
    t = 0;
    const a = admission();
    a.admit(who('x'));
    a.admit(who('x'));
    t = 10_001;
    expect(() => a.admit(who('x'))).not.toThrow();
  });

  it("charges a share's connections to its root minter as well as to the share", () => {
    t = 0;
    const a = admission();
    a.admit(who('alice'));
    a.admit(who('share:1', 'pty:observe', 'alice'));
    expect(() => a.admit(who('share:2', 'pty:observe', 'alice'))).toThrowError(/alice and the shares minted from it already hold 2 .*PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL=2/);
    expect(() => a.admit(who('alice'))).toThrowError(/principal alice already has 2/);
    expect(() => a.admit(who('share:3', 'pty:observe', 'bob'))).not.toThrow();
  });

  it('keeps the reserved places of the instance for pty:admin', () => {
    t = 0;
    const a = admission(1);
    a.admit(who('x'));
    a.admit(who('y'));
    expect(() => a.admit(who('z'))).toThrowError(/PTY_WS_MAX_CONNECTIONS_PER_INSTANCE=3; the last 1 are kept for pty:admin/);
    a.admit(who('root', 'pty:admin'));
    expect(() => a.admit(who('root', 'pty:admin'))).toThrowError(/PTY_WS_MAX_CONNECTIONS_PER_INSTANCE=3\)/);
  });

  it('reserves 1/32 of the instance for pty:admin unless set, and never all of it', () => {
    expect(loadConfig({}).adminReservedConnections).toBe(8);
    expect(loadConfig({ PTY_WS_MAX_CONNECTIONS_PER_INSTANCE: '20' }).adminReservedConnections).toBe(0);
    expect(loadConfig({ PTY_WS_MAX_CONNECTIONS_PER_INSTANCE: '20', PTY_WS_ADMIN_RESERVED_CONNECTIONS: '19' }).adminReservedConnections).toBe(19);
    expect(() => loadConfig({ PTY_WS_MAX_CONNECTIONS_PER_INSTANCE: '20', PTY_WS_ADMIN_RESERVED_CONNECTIONS: '20' })).toThrowError(/PTY_WS_ADMIN_RESERVED_CONNECTIONS .*fewer than PTY_WS_MAX_CONNECTIONS_PER_INSTANCE \(20\), got 20/);
  });
});

describe('JSON nesting depth', () => {
  const nested = (n: number) => `{"op":"ping","id":"1","ts":"2026-01-01T00:00:00Z","payload":{"x":${'['.repeat(n)}${']'.repeat(n)}}}`;

  it('counts brackets outside strings only', () => {
    expect(nestsDeeperThan('{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', 2)).toBe(false);
    expect(nestsDeeperThan('{"a":"\\"[[[[","b":[[]]}', 3)).toBe(false);
    expect(nestsDeeperThan('{"a":"\\"[[[[","b":[[[]]]}', 3)).toBe(true);
  });

  it('refuses a frame nested deeper than 32 levels with INVALID_REQUEST and accepts 32', () => {
    expect(decodeClientFrame(nested(30))).toMatchObject({ ok: true });
    const r = decodeClientFrame(nested(31));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.code).toBe('INVALID_REQUEST');
    expect(!r.ok && r.error.message).toMatch(/deeper than 32/);
    expect(decodeClientFrame(nested(400_000)).ok).toBe(false);
  });
});

describe('start-up security policy', () => {
  const problems = (env: Record<string, string>) => securityProblems(loadConfig(env));

  it('accepts the defaults and a complete production setup', () => {
    expect(problems({})).toEqual([]);
    expect(problems({ PTY_WS_PRODUCTION: '1', PTY_WS_TRUST_PROXY_TLS: '1', PTY_WS_TOKENS_FILE: '/x' })).toEqual([]);
    expect(problems({ PTY_WS_PRODUCTION: '1', PTY_WS_TLS_CERT: '/c', PTY_WS_TLS_KEY: '/k', PTY_WS_JWKS_URL: 'https://idp/jwks' })).toEqual([]);
    expect(problems({ PTY_WS_AUTH: 'off', PTY_WS_HOST: '::1' })).toEqual([]);
  });

  it.each([
    [{ PTY_WS_AUTH: 'off', PTY_WS_PRODUCTION: '1', PTY_WS_TRUST_PROXY_TLS: '1' }, /PTY_WS_AUTH=off is refused with PTY_WS_PRODUCTION=1/],
    [{ PTY_WS_AUTH: 'off', PTY_WS_HOST: '0.0.0.0' }, /non-loopback address PTY_WS_HOST=0\.0\.0\.0/],
    [{ PTY_WS_AUTH: 'off', PTY_WS_TOKENS_FILE: '/x' }, /contradicts/],
    [{ PTY_WS_PRODUCTION: '1' }, /wss:\/\/ only: set PTY_WS_TLS_CERT and PTY_WS_TLS_KEY, or PTY_WS_TRUST_PROXY_TLS=1/],
    [{ PTY_WS_TLS_CERT: '/c' }, /go together/],
    [{ PTY_WS_PRODUCTION: '1', PTY_WS_TRUST_PROXY_TLS: '1', PTY_WS_JWT_SECRET: 'short' }, /PTY_WS_JWT_SECRET is too short/],
    [{ PTY_WS_PRODUCTION: '1', PTY_WS_TRUST_PROXY_TLS: '1', PTY_WS_JWKS_URL: 'http://idp.example/jwks' }, /PTY_WS_JWKS_URL must be https/],
  ])('refuses %j', (env, message) => {
    expect(problems(env).join('\n')).toMatch(message);
  });

  it('normalises PTY_WS_ALLOWED_ORIGINS and refuses values that are not origins', () => {
    expect(loadConfig({ PTY_WS_ALLOWED_ORIGINS: 'https://App.Example.com:443/, http://localhost:3000' }).allowedOrigins).toEqual(['https://app.example.com', 'http://localhost:3000']);
    expect(() => loadConfig({ PTY_WS_ALLOWED_ORIGINS: 'https://app.example.com/path' })).toThrowError(/PTY_WS_ALLOWED_ORIGINS/);
  });
});

describe('credential expiry timer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires at the expiry even when it is beyond setTimeout range, and not before', () => {
    vi.useFakeTimers();
    const start = Date.now();
    const fired = vi.fn();
    onExpiry(start + 40 * 86_400_000, () => Date.now(), fired);
    vi.advanceTimersByTime(39 * 86_400_000);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(86_400_000);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('can be cancelled', () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    onExpiry(Date.now() + 1000, () => Date.now(), fired).cancel();
    vi.advanceTimersByTime(2000);
    expect(fired).not.toHaveBeenCalled();
  });
});
