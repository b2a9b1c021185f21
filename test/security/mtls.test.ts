// mTLS (binding: client certificate → principal; docs/security.md item 9) against the real
// https/wss server, PTY host and shell: certificates from the configured CA name the caller (CN)
// and its scopes (OU), over REST and the WebSocket; others are refused; the AgentCard says so.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64 } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { selfSignedCert } from '../helpers/tls.ts';

let dir: string;
let server: TestServer;
let serverCa: string;

interface ClientCert {
  cert: string;
  key: string;
}

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

function makeCa(name: string): void {
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${name}`, '-days', '1', '-keyout', `${name}.key`, '-out', `${name}.pem`);
}

function clientCert(ca: string, subject: string, name: string): ClientCert {
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', subject, '-keyout', `${name}.key`, '-out', `${name}.csr`);
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '1', '-out', `${name}.pem`);
  return { cert: readFileSync(join(dir, `${name}.pem`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

function get(path: string, cert?: ClientCert): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.origin}${path}`, { ca: serverCa, ...cert }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens the attach socket with the certificate; resolves with it once open, or with the HTTP status of a refusal. */
function attach(sessionId: string, cert?: ClientCert): Promise<WebSocket | number> {
  const ws = new WebSocket(server.attachUrl(sessionId), ['pty-ws.v1'], { ca: serverCa, ...cert });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', reject);
  });
}

function frames(ws: WebSocket): Array<{ op: string; id: string; payload: Record<string, unknown> }> {
  const seen: Array<{ op: string; id: string; payload: Record<string, unknown> }> = [];
  ws.on('message', (d: Buffer, binary: boolean) => {
    if (!binary) seen.push(JSON.parse(d.toString()) as (typeof seen)[number]);
  });
  return seen;
}

async function until<T>(check: () => T | undefined, what: string): Promise<T> {
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 30))) {
    const v = check();
    if (v !== undefined) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

let carol: ClientCert;
let otto: ClientCert;
let nobody: ClientCert;
let rogue: ClientCert;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-mtls-'));
  const tls = selfSignedCert(dir, 'openssl');
  serverCa = tls.cert;
  makeCa('clients-ca');
  makeCa('rogue-ca');
  carol = clientCert('clients-ca', '/CN=carol/OU=pty:control', 'carol');
  otto = clientCert('clients-ca', '/CN=otto/OU=pty:observe', 'otto');
  nobody = clientCert('clients-ca', '/CN=nobody', 'nobody');
  rogue = clientCert('rogue-ca', '/CN=carol/OU=pty:admin', 'rogue');
  server = await startTestServer({ PTY_WS_TLS_CERT: tls.certFile, PTY_WS_TLS_KEY: tls.keyFile, PTY_WS_TLS_CLIENT_CA: join(dir, 'clients-ca.pem') });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const sessions = () => `/agents/${server.config.instanceId}/sessions`;

describe('mTLS', () => {
  it('a certificate of the configured CA is the principal: CN names it, OU gives its scopes', async () => {
    const listed = await get(sessions(), carol);
    expect(listed.status).toBe(200);
    const id = server.defaultSession!.id;
    const ws = await attach(id, carol);
    expect(ws).toBeInstanceOf(WebSocket);
    const seen = frames(ws as WebSocket);
    const send = (op: string, payload: Record<string, unknown>) => (ws as WebSocket).send(JSON.stringify({ op, id: `${op}-${seen.length}`, ts: new Date().toISOString(), payload }));
    send('pty.join_session', { role: 'controller' });
    await until(() => seen.find((f) => f.payload.kind === 'RoleAssigned' && f.payload.role === 'controller'), 'controller role');
    send('pty.session_input', { data: b64('echo mtls-$((5*5))\r') });
    await until(() => seen.some((f) => f.payload.kind === 'Output' && Buffer.from(String(f.payload.data), 'base64').toString().includes('mtls-25')) || undefined, 'output');
    (ws as WebSocket).close();
    const attachLog = server.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'audit.attach' && l.principal === 'carol');
    expect(attachLog).toMatchObject({ principal: 'carol', role: 'controller', scopes: ['pty:control'] });
  });

  it('an observe certificate watches only; one without a scope is refused; a bearer still works without a certificate', async () => {
    const id = server.defaultSession!.id;
    const ws = (await attach(id, otto)) as WebSocket;
    const seen = frames(ws);
    ws.send(JSON.stringify({ op: 'pty.join_session', id: 'j', ts: new Date().toISOString(), payload: { role: 'observer' } }));
    await until(() => seen.find((f) => f.payload.kind === 'Keyframe'), 'join');
    ws.send(JSON.stringify({ op: 'pty.session_input', id: 'typed', ts: new Date().toISOString(), payload: { data: b64('echo otto\r') } }));
    expect((await until(() => seen.find((f) => f.id === 'typed'), 'refusal')).payload.code).toBe('PERMISSION_DENIED');
    ws.close();
    expect((await get(sessions(), nobody)).status).toBe(403);
    const bearer = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.origin}${sessions()}`, { ca: serverCa, headers: { authorization: `Bearer ${server.devToken}` } }, (res) => resolve(res.statusCode ?? 0));
      req.on('error', reject);
      req.end();
    });
    expect(bearer).toBe(200);
  });

  it('a certificate from another CA, or none and no bearer, is refused before the upgrade', async () => {
    const rogueRest = await get(sessions(), rogue);
    expect(rogueRest.status).toBe(401);
    expect(rogueRest.body).toMatch(/client certificate is not trusted/);
    expect(await attach(server.defaultSession!.id, rogue)).toBe(401);
    expect((await get(sessions())).status).toBe(401);
    expect(await attach(server.defaultSession!.id)).toBe(401);
  });

  it('the AgentCard advertises mTLS next to the bearer', async () => {
    const card = JSON.parse((await get('/.well-known/agent-card.json')).body) as { securitySchemes: Record<string, unknown>; securityRequirements: unknown[] };
    expect(card.securitySchemes.mtls).toMatchObject({ mtlsSecurityScheme: { description: expect.stringMatching(/CN = principal/) } });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }, { schemes: { mtls: { list: [] } } }]);
  });
});
