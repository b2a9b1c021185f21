// The Node webhook transport (src/adapter/node/webhook-transport.ts) against a real HTTPS server
// on loopback: the connection goes to the address it is given, while the URL's name is what TLS
// (SNI, certificate) and Host carry, so a check of the address cannot be walked around by a name
// resolving elsewhere when the connection is made.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeWebhookTransport } from '../../src/adapter/node/webhook-transport.ts';

let dir: string;
let cert: string;
let server: Server;
let port: number;
const seen: Array<{ host?: string; servername: string | false | null; body: string }> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-hook-tls-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=hooks.example.test', '-addext', 'subjectAltName=DNS:hooks.example.test', '-days', '1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    { stdio: 'ignore' },
  );
  cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  server = createServer({ cert, key: readFileSync(join(dir, 'key.pem')) }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ host: req.headers.host, servername: (req.socket as TLSSocket).servername, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('the Node webhook transport', () => {
  it('connects to the address given, naming the URL host in SNI and Host, verified against its certificate', async () => {
    const t = nodeWebhookTransport({ ca: cert });
    const url = new URL(`https://hooks.example.test:${port}/hook?a=1`);
    expect(await t.post({ url, address: '127.0.0.1', headers: { 'content-type': 'application/a2a+json' }, body: '{"x":1}', timeoutMs: 5000 })).toBe(204);
    expect(seen.at(-1)).toEqual({ host: `hooks.example.test:${port}`, servername: 'hooks.example.test', body: '{"x":1}' });
  });

  it('refuses a certificate that does not name the URL host, and does not trust an unknown CA', async () => {
    const wrongName = new URL(`https://other.example.test:${port}/hook`);
    await expect(nodeWebhookTransport({ ca: cert }).post({ url: wrongName, address: '127.0.0.1', headers: {}, body: '{}', timeoutMs: 5000 })).rejects.toThrow(/altnames|does not match/i);
    const url = new URL(`https://hooks.example.test:${port}/hook`);
    await expect(nodeWebhookTransport().post({ url, address: '127.0.0.1', headers: {}, body: '{}', timeoutMs: 5000 })).rejects.toThrow(/self.signed|certificate/i);
  });

  it('resolves an IP literal to itself and a name to its addresses', async () => {
    const t = nodeWebhookTransport();
    expect(await t.resolve('10.1.2.3')).toEqual(['10.1.2.3']);
    expect(await t.resolve('localhost')).toContain('127.0.0.1');
  });
});
