// Refusals before the upgrade on the real Node server, read off a raw socket: the status, the
// JSON content type and the same `{error: {code, message}}` body the REST routes send.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** A WebSocket upgrade request written by hand; resolves with everything the server sent until it closed. */
function rawUpgrade(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { port } = new URL(server.origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const fields = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers: fields, body });
    });
    const all = { host: `127.0.0.1:${port}`, upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-version': '13', 'sec-websocket-protocol': 'pty-ws.v1', ...headers };
    socket.write(`GET ${path} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`);
  });
}

describe('refusals before the upgrade (Node)', () => {
  it.each([
    ['a bad bearer', 401, 'unauthenticated', (id: string) => [`/agents/local/sessions/${id}/attach`, { authorization: 'Bearer nope' }] as const],
    ['a token in the query', 400, 'invalid_request', (id: string) => [`/agents/local/sessions/${id}/attach?token=x`, {}] as const],
    ['an unknown session', 404, 'not_found', () => ['/agents/local/sessions/01900000-0000-7000-8000-000000000000/attach', { authorization: `Bearer ${server.devToken}` }] as const],
    ['a conflicting subprotocol', 400, 'invalid_request', (id: string) => [`/agents/local/sessions/${id}/attach`, { authorization: `Bearer ${server.devToken}`, 'sec-websocket-protocol': 'chat' }] as const],
  ])('%s: %i with the JSON error body', async (_what, status, code, request) => {
    const [path, headers] = request(server.defaultSession!.id);
    const res = await rawUpgrade(path, headers);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    const body = JSON.parse(res.body) as { error: { code: string; message: string } };
    expect(body.error.code.toLowerCase()).toContain(code);
    expect(body.error.message.length).toBeGreaterThan(0);
    // The server lives on.
    expect((await fetch(`${server.origin}/healthz`)).status).toBe(200);
  });
});
