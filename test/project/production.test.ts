// Production mode and the settings around it, against real servers: wss:// from TLS files, a trusted
// TLS-terminating proxy, start-up refusals, browser Origins, attach limits, JWTs from a JWKS URL.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { selfSignedCert, type TestCert } from '../helpers/tls.ts';
import { newToken, signJwt, writeTokenFile, type TestToken } from '../helpers/tokens.ts';

const ann: TestToken = { token: newToken(), principal: 'ann', scopes: ['pty:control'] };
const ben: TestToken = { token: newToken(), principal: 'ben', scopes: ['pty:control'] };
const cid: TestToken = { token: newToken(), principal: 'cid', scopes: ['pty:observe'] };

let dir: string;
let tokensFile: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-prod-'));
  tokensFile = join(dir, 'tokens.json');
  writeTokenFile(tokensFile, [ann, ben, cid]);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function retry<T>(f: () => Promise<T>, tries = 20): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await f();
    } catch (e) {
      if (i >= tries) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function startFails(env: Record<string, string>): Promise<string> {
  const e = await startTestServer(env).then(
    async (s) => {
      await s.stop();
      return new Error('the server started');
    },
    (err: unknown) => err as Error,
  );
  return e.message;
}

describe('start-up refuses combinations that would not be safe, with a clear message', () => {
  it('production without TLS, auth off in production or on a public address, half a TLS pair', async () => {
    expect(await startFails({ PTY_WS_PRODUCTION: '1', PTY_WS_TOKENS_FILE: tokensFile })).toMatch(/PTY_WS_PRODUCTION=1 serves wss:\/\/ only/);
    expect(await startFails({ PTY_WS_PRODUCTION: '1', PTY_WS_TRUST_PROXY_TLS: '1', PTY_WS_AUTH: 'off' })).toMatch(/PTY_WS_AUTH=off is refused with PTY_WS_PRODUCTION=1/);
    expect(await startFails({ PTY_WS_AUTH: 'off', PTY_WS_HOST: '0.0.0.0' })).toMatch(/non-loopback address PTY_WS_HOST=0\.0\.0\.0/);
    expect(await startFails({ PTY_WS_TLS_KEY: join(dir, 'key.pem') })).toMatch(/go together/);
  });

  it('a broken or missing token map, naming the file and the problem', async () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ tokens: [{ sha256: 'x'.repeat(64), principal: 'p', scopes: ['pty:control'] }] }));
    const msg = await startFails({ PTY_WS_TOKENS_FILE: broken });
    expect(msg).toContain(`PTY_WS_TOKENS_FILE ${broken}: tokens.0.sha256`);
    expect(await startFails({ PTY_WS_TOKENS_FILE: join(dir, 'missing.json') })).toMatch(/PTY_WS_TOKENS_FILE .*missing\.json: cannot read it \(ENOENT\)/);
  });

  it('unusable TLS files or JWT keys', async () => {
    writeFileSync(join(dir, 'junk.pem'), 'not a certificate');
    expect(await startFails({ PTY_WS_TLS_CERT: join(dir, 'junk.pem'), PTY_WS_TLS_KEY: join(dir, 'junk.pem') })).toMatch(/not a usable certificate and key pair/);
    expect(await startFails({ PTY_WS_TLS_CERT: join(dir, 'nope.pem'), PTY_WS_TLS_KEY: join(dir, 'nope.pem') })).toMatch(/PTY_WS_TLS_CERT .*nope\.pem: cannot read it/);
    expect(await startFails({ PTY_WS_JWT_PUBLIC_KEY: join(dir, 'junk.pem') })).toMatch(/PTY_WS_JWT_PUBLIC_KEY: expected a PEM/);
    expect(await startFails({ PTY_WS_JWT_SECRET: 'a-secret-long-enough-to-pass-0123456789', PTY_WS_JWKS_URL: 'https://idp.example/jwks' })).toMatch(/exactly one of/);
  });
});

describe('production with TLS files: wss://', () => {
  let server: TestServer;
  let cert: TestCert;

  beforeAll(async () => {
    cert = selfSignedCert(mkdtempSync(join(dir, 'tls-')));
    server = await startTestServer({ PTY_WS_PRODUCTION: '1', PTY_WS_TLS_CERT: cert.certFile, PTY_WS_TLS_KEY: cert.keyFile, PTY_WS_TOKENS_FILE: tokensFile });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves the attach over wss:// and REST over https://, and requires the subprotocol', async () => {
    expect(server.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const url = server.attachUrl(server.defaultSession!.id);
    expect(url).toMatch(/^wss:\/\//);
    const c = await TestClient.connect(url, { token: ann.token, ca: cert.cert });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo over-tls-$((2*21))\r') });
    await c.waitForOutput('over-tls-42');
    expect(await TestClient.refusedStatus(url, { token: ann.token, ca: cert.cert, protocols: [] })).toBe(400);
    expect(await TestClient.refusedStatus(url, { ca: cert.cert })).toBe(401);
    c.close();

    const listed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${server.origin}/agents/local/sessions`, { ca: cert.cert, headers: { authorization: `Bearer ${ann.token}` } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body).sessions[0].attach_url).toMatch(/^wss:\/\//);
  });
});

describe('production behind a trusted TLS proxy, with Origins and limits', () => {
  let server: TestServer;
  const https = { 'x-forwarded-proto': 'https' };

  beforeAll(async () => {
    server = await startTestServer({
      PTY_WS_PRODUCTION: '1',
      PTY_WS_TRUST_PROXY_TLS: '1',
      PTY_WS_TOKENS_FILE: tokensFile,
      PTY_WS_ALLOWED_ORIGINS: 'https://app.example.com',
      PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL: '2',
      PTY_WS_MAX_CONNECTIONS_PER_INSTANCE: '3',
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses plain ws:// and http:// that did not come through the proxy with 403; healthz stays open', async () => {
    const url = server.attachUrl(server.defaultSession!.id);
    expect(await TestClient.refusedStatus(url, { token: ann.token })).toBe(403);
    expect(await TestClient.refusedStatus(url, { token: ann.token, headers: { 'x-forwarded-proto': 'http' } })).toBe(403);
    const rest = await fetch(`${server.origin}/agents/local/sessions`, { headers: { authorization: `Bearer ${ann.token}` } });
    expect(rest.status).toBe(403);
    expect(await rest.json()).toMatchObject({ error: { code: 'tls_required' } });
    const listed = await fetch(`${server.origin}/agents/local/sessions`, { headers: { authorization: `Bearer ${ann.token}`, ...https } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { sessions: Array<{ attach_url: string }> }).sessions[0]!.attach_url).toMatch(/^wss:\/\//);
    const card = (await (await fetch(`${server.origin}/.well-known/agent-card.json`, { headers: https })).json()) as { bindings: Array<{ endpoint: string }> };
    expect(card.bindings[0]!.endpoint).toMatch(/^wss:\/\//);
    expect((await fetch(`${server.origin}/healthz`)).status).toBe(200);
    // Fetched over plain HTTP the cards still name only wss:// and https://: this server refuses the rest.
    for (const path of ['/.well-known/agent-card.json', '/fleet/.well-known/agent-card.json']) {
      const plain = (await (await fetch(`${server.origin}${path}`)).json()) as { supportedInterfaces: Array<{ url: string }>; bindings?: Array<{ endpoint: string }>; provider: { url: string } };
      expect(plain.supportedInterfaces.map((i) => i.url.replace(/:.*/, '')), path).toEqual(plain.supportedInterfaces.map((i) => (i.url.startsWith('ws') ? 'wss' : 'https')));
      expect(plain.provider.url, path).toMatch(/^https:\/\//);
      if (plain.bindings) expect(plain.bindings[0]!.endpoint, path).toMatch(/^wss:\/\//);
    }
    const c = await TestClient.connect(url, { token: ann.token, headers: https });
    await c.waitForFrame((f) => f.op === 'binding_hello', 'hello through the proxy');
    c.close();
  });

  it('allows the listed Origin and our own https origin, refuses others with 403', async () => {
    const url = server.attachUrl(server.defaultSession!.id);
    const self = server.origin.replace(/^http:/, 'https:');
    for (const origin of ['https://app.example.com', self]) {
      const c = await TestClient.connect(url, { token: ann.token, headers: { ...https, origin } });
      await c.waitForFrame((f) => f.op === 'binding_hello', `hello from ${origin}`);
      c.close();
      await c.waitForClose();
    }
    for (const origin of ['https://evil.example', 'http://app.example.com', server.origin]) {
      expect(await TestClient.refusedStatus(url, { token: ann.token, headers: { ...https, origin } }), origin).toBe(403);
    }
  });

  it('refuses attaches beyond PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL and _PER_INSTANCE with 429; a closed one frees its slot', async () => {
    const url = server.attachUrl(server.defaultSession!.id);
    const open = (t: TestToken) => TestClient.connect(url, { token: t.token, headers: https });
    const a1 = await open(ann);
    const a2 = await open(ann);
    expect(await TestClient.refusedStatus(url, { token: ann.token, headers: https })).toBe(429);
    const b1 = await open(ben);
    expect(await TestClient.refusedStatus(url, { token: cid.token, headers: https })).toBe(429);
    a1.close();
    await a1.waitForClose();
    // The server learns of the close a moment after the client does.
    const c1 = await retry(() => TestClient.connect(url, { token: cid.token, headers: https }));
    await c1.waitForFrame((f) => f.op === 'binding_hello', 'hello once a slot is free');
    await a2.join({ role: 'controller' });
    a2.send('pty.session_input', { data: b64('echo at-the-limit\r') });
    await a2.waitForOutput('at-the-limit');
    for (const c of [a2, b1, c1]) c.close();
  });
});

describe('JWT bearers verified against a JWKS URL, with iss and aud', () => {
  let jwks: Server;
  let server: TestServer;
  let key: CryptoKey;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    key = pair.privateKey;
    const body = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] });
    jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    server = await startTestServer({
      PTY_WS_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`,
      PTY_WS_JWT_ISSUER: 'https://idp.test',
      PTY_WS_JWT_AUDIENCE: 'pty-ws',
    });
  });
  afterAll(async () => {
    await server?.stop();
    await new Promise<void>((r) => jwks.close(() => r()));
  });

  it('attaches with a token the JWKS key signed; refuses a wrong issuer, audience or key with 401', async () => {
    const url = server.attachUrl(server.defaultSession!.id);
    const claims = { sub: 'jwks-user', scope: 'pty:control', iss: 'https://idp.test', aud: 'pty-ws' };
    const c = await TestClient.connect(url, { token: await signJwt(claims, key, 'ES256', 'k1') });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo via-jwks\r') });
    await c.waitForOutput('via-jwks');
    c.close();
    expect(await TestClient.refusedStatus(url, { token: await signJwt({ ...claims, iss: 'https://other.test' }, key, 'ES256', 'k1') })).toBe(401);
    expect(await TestClient.refusedStatus(url, { token: await signJwt({ ...claims, aud: 'someone-else' }, key, 'ES256', 'k1') })).toBe(401);
    const stranger = await generateKeyPair('ES256');
    expect(await TestClient.refusedStatus(url, { token: await signJwt(claims, stranger.privateKey, 'ES256', 'k1') })).toBe(401);
  });
});
