// Sockets that connect and send nothing (docs/security.md, attack 8), against the real router over
// real sockets from several loopback source addresses (all of 127.0.0.0/8 is loopback on Linux):
// one address's flood must not keep another address out. Before, the cap of waiting sockets was
// one for everyone and refused the newcomer: 300 silent sockets from one address and no /healthz
// from anywhere else got through.
import { mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { Agent, get as httpsGet } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { selfSignedCert } from '../helpers/tls.ts';

let server: TestServer;

beforeAll(async () => {
  // The handshake timeouts have their own test (security-edge.test.ts): here no waiting socket may
  // be dropped by them while a test still counts it.
  server = await startTestServer({}, {}, { overrides: { headersTimeoutMs: 60_000, requestTimeoutMs: 120_000 } });
});
afterAll(() => server?.stop());

/** Sockets the server has hung up on (its FIN, or a reset), as this side has seen so far. */
const hungUp = new WeakSet<Socket>();

async function silent(from: string, port = server.port): Promise<Socket> {
  const s = connect({ port, host: '127.0.0.1', localAddress: from });
  s.on('error', () => undefined);
  for (const e of ['end', 'close', 'error']) s.once(e, () => hungUp.add(s));
  s.resume();
  await new Promise((r) => s.once('connect', r));
  return s;
}

const hangUp = (s: Socket): Promise<void> => (hungUp.has(s) ? Promise.resolve() : new Promise((r) => s.once('close', r)));

/** hangUp, failing when the server still holds the socket after a few seconds. */
const hungUpSoon = (s: Socket): Promise<void> =>
  Promise.race([hangUp(s), new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`${s.localAddress}:${s.localPort} still open`)), 5000).unref())]);

/** GET /healthz from this source address on a new connection: its status, 0 if the connection was dropped. */
function healthz(from: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpGet({ host: '127.0.0.1', port: server.port, path: '/healthz', localAddress: from, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.setTimeout(5000, () => req.destroy());
  });
}

/** A request on a socket that has waited silently until now: its status line. */
function requestOn(s: Socket): Promise<string> {
  let text = '';
  s.setEncoding('utf8');
  s.on('data', (d: string) => (text += d));
  s.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: close\r\n\r\n`);
  return hangUp(s).then(() => text.split('\r\n')[0]!);
}

/** `count` silent sockets from one address, each opened again 100 ms after the server drops it. */
function flood(from: string, count: number): { connected: () => number; stop: () => Promise<void> } {
  let stopped = false;
  let connected = 0;
  const live = new Set<Socket>();
  const one = () => {
    if (stopped) return;
    const s = connect({ port: server.port, host: '127.0.0.1', localAddress: from });
    live.add(s);
    s.on('error', () => undefined);
    s.once('connect', () => connected++);
    s.once('close', () => {
      live.delete(s);
      setTimeout(one, 100);
    });
    s.resume();
  };
  for (let i = 0; i < count; i++) one();
  return {
    connected: () => connected,
    stop: async () => {
      stopped = true;
      const left = [...live];
      for (const s of left) s.destroy();
      await Promise.all(left.map(hangUp));
    },
  };
}

// The exact evictions first: the flood's last sockets may take a moment to close on the server.
describe('connections that have not sent a request', () => {
  it('past the per-address cap the address loses its longest-waiting socket; past the total, the busiest address does; the newcomer stays', async () => {
    const { maxPendingConnections: total, maxPendingConnectionsPerAddress: perAddress } = server.config;
    const addresses = Array.from({ length: total / perAddress }, (_, i) => `127.0.0.${10 + i}`);
    const held: Socket[] = [];
    try {
      for (const from of addresses) for (let i = 0; i < perAddress; i++) held.push(await silent(from));
      // Every address at its cap, the total reached: one more from a new address closes the
      // first socket of the first address (the busiest all tie; it waited longest), not the newcomer.
      const newcomer = await silent('127.0.0.50');
      await hungUpSoon(held[0]!);
      expect(await requestOn(newcomer)).toBe('HTTP/1.1 200 OK');
      expect(held.filter((s) => hungUp.has(s))).toEqual([held[0]]);

      // One more from the second address, at its own cap: its own first socket goes.
      const again = await silent(addresses[1]!);
      await hungUpSoon(held[perAddress]!);
      expect(await requestOn(again)).toBe('HTTP/1.1 200 OK');
      expect(held.filter((s) => hungUp.has(s))).toEqual([held[0], held[perAddress]]);
      expect(await healthz('127.0.0.51')).toBe(200);
    } finally {
      for (const s of held) s.destroy();
      await Promise.all(held.map(hangUp));
    }
  }, 30_000);

  it('300 silent reconnecting sockets from one address leave another address answered', async () => {
    const attacker = flood('127.0.0.2', 300);
    try {
      await expect.poll(attacker.connected, { timeout: 10_000 }).toBeGreaterThanOrEqual(300);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push(await healthz('127.0.0.3'));
      expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
    } finally {
      await attacker.stop();
    }
  }, 30_000);
});

describe('connections that have sent a request', () => {
  it('no longer count as waiting, over TLS too (the request arrives on the TLS socket, not the TCP one)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pty-ws-pending-tls-'));
    const cert = selfSignedCert(dir);
    const tls = await startTestServer({ PTY_WS_TLS_CERT: cert.certFile, PTY_WS_TLS_KEY: cert.keyFile }, {}, { overrides: { headersTimeoutMs: 60_000, requestTimeoutMs: 120_000 } });
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: cert.cert });
    const held: Socket[] = [];
    try {
      const get = () =>
        new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
          const req = httpsGet({ host: '127.0.0.1', port: tls.port, path: '/healthz', localAddress: '127.0.0.60', agent }, (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
          });
          req.on('error', reject);
        });
      expect(await get()).toEqual({ status: 200, reused: false });
      // A full address's worth of silent sockets beside it: were the kept-alive connection still
      // counted as waiting, it would be the address's longest-waiting one and closed.
      for (let i = 0; i < tls.config.maxPendingConnectionsPerAddress; i++) held.push(await silent('127.0.0.60', tls.port));
      expect(await get()).toEqual({ status: 200, reused: true });
      expect(held.filter((s) => hungUp.has(s))).toEqual([]);
    } finally {
      agent.destroy();
      for (const s of held) s.destroy();
      await tls.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
