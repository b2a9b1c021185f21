// What A2A clients nobody here wrote meet (the official SDK, the conformance kit, a strict JSON
// schema): trailing slashes, WWW-Authenticate on every 401, the request id echoed on auth and
// version errors, error bodies in the binding's own shape wherever an A2A path is answered, unknown
// ListTasks parameters refused, pty-extensions refused off its binding, the cards' caching headers,
// A2A's media type and the A2A-Version query parameter. Real router, PTY host and libSQL file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { EXTENSION_URI } from '../../src/protocol/uris.ts';
import { a2aClient, list, rejection, send, TRANSPORTS, userText } from '../helpers/a2a.ts';
import { TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';

const ctl: TestToken = { token: newToken(), principal: 'carla', scopes: ['pty:control'] };

let server: TestServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-a2a-interop-'));
  writeTokenFile(join(dir, 'tokens.json'), [ctl]);
  server = await startTestServer({ PTY_WS_TOKENS_FILE: join(dir, 'tokens.json') });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Body = { jsonrpc?: string; id?: unknown; result?: unknown; error?: { code: number | string; status?: string; message: string; data?: Array<{ reason: string; metadata?: Record<string, string> }>; details?: Array<{ reason: string; metadata?: Record<string, string> }> } };

const auth = (token = ctl.token) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
const instance = () => `${server.origin}/agents/${server.config.instanceId}`;

async function call(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: Body }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as Body };
}

const rpc = (body: Record<string, unknown>, headers: Record<string, string> = auth(), path = `${instance()}/a2a/jsonrpc`) => call(path, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', ...body }) });

describe('JSON-RPC endpoint paths', () => {
  it('accepts a trailing slash, on the instance and the fleet agent', async () => {
    for (const path of [`${instance()}/a2a/jsonrpc/`, `${server.origin}/fleet/a2a/jsonrpc/`]) {
      const res = await rpc({ id: 1, method: 'ListTasks', params: {} }, auth(), path);
      expect(res, path).toMatchObject({ status: 200, body: { id: 1, result: { tasks: expect.any(Array) } } });
    }
  });

  it("another instance's path is a 404 in JSON-RPC's shape, with the id", async () => {
    const res = await rpc({ id: 'q', method: 'ListTasks', params: {} }, auth(), `${server.origin}/agents/elsewhere/a2a/jsonrpc`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 'q', error: { code: expect.any(Number), message: expect.stringMatching(/elsewhere/), data: [{ reason: 'NOT_FOUND' }] } });
  });
});

describe('401s', () => {
  it('carry WWW-Authenticate: Bearer realm="pty-ws", with error="invalid_token" for a bad token, on every route', async () => {
    const urls: Array<[string, RequestInit]> = [
      [`${instance()}/sessions`, {}],
      [`${instance()}/a2a/rest/tasks`, {}],
      [`${instance()}/a2a/jsonrpc`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }) }],
      [`${server.origin}/fleet/a2a/rest/tasks`, {}],
      [`${server.origin}/instances`, {}],
      [`${server.origin}/metrics`, {}],
    ];
    for (const [url, init] of urls) {
      const none = await fetch(url, { ...init, headers: { 'content-type': 'application/json' } });
      expect(none.status, url).toBe(401);
      expect(none.headers.get('www-authenticate'), url).toBe('Bearer realm="pty-ws"');
      const bad = await fetch(url, { ...init, headers: auth('not-a-token') });
      expect(bad.status, url).toBe(401);
      expect(bad.headers.get('www-authenticate'), url).toMatch(/^Bearer realm="pty-ws", error="invalid_token"/);
    }
    // The attach upgrade's refusal too (written to the socket by the Node adapter).
    const refused = await new Promise<{ status: number; challenge: string | undefined }>((resolve, reject) => {
      const ws = new WebSocket(server.attachUrl(server.defaultSession!.id), ['pty-ws.v1'], { headers: { authorization: 'Bearer not-a-token' } });
      ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, challenge: res.headers['www-authenticate'] }));
      ws.on('open', () => reject(new Error('the upgrade was accepted')));
      ws.on('error', () => undefined);
    });
    expect(refused).toEqual({ status: 401, challenge: 'Bearer realm="pty-ws", error="invalid_token"' });
  });
});

describe('JSON-RPC errors echo the request id whenever it could be read', () => {
  it('for a missing or bad bearer and for an unsupported A2A-Version', async () => {
    const body = { id: 41, method: 'ListTasks', params: {} };
    const none = await rpc(body, { 'content-type': 'application/json' });
    expect(none).toMatchObject({ status: 401, body: { id: 41, error: { code: -32050 } } });
    const bad = await rpc({ ...body, id: 'forty-two' }, auth('not-a-token'));
    expect(bad).toMatchObject({ status: 401, body: { id: 'forty-two', error: { code: -32050 } } });
    const version = await rpc({ ...body, id: 43 }, { ...auth(), 'a2a-version': '2.0' });
    expect(version).toMatchObject({ body: { id: 43, error: { code: -32009 } } });
  });
});

describe('HTTP+JSON error bodies are google.rpc.Status everywhere', () => {
  it('an unknown route (404), a wrong method (405) and another instance (404)', async () => {
    const unknown = await call(`${instance()}/a2a/rest/tasks/x:frobnicate`, { method: 'POST', headers: auth() });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 404, status: 'NOT_FOUND', message: expect.any(String), details: [{ reason: 'NOT_FOUND' }] } } });
    const method = await call(`${instance()}/a2a/rest/message:send`, { method: 'GET', headers: auth() });
    expect(method).toMatchObject({ status: 405, body: { error: { code: 405, status: expect.any(String), details: [{ reason: 'METHOD_NOT_ALLOWED' }] } } });
    const other = await call(`${server.origin}/agents/elsewhere/a2a/rest/tasks`, { headers: auth() });
    expect(other).toMatchObject({ status: 404, body: { error: { code: 404, status: 'NOT_FOUND', details: [{ reason: 'NOT_FOUND' }] } } });
  });
});

describe('ListTasks refuses what it does not know', () => {
  it('HTTP+JSON: an unknown query parameter is 400 naming it, not everything', async () => {
    const res = await call(`${instance()}/a2a/rest/tasks?context_id=x`, { headers: auth() });
    expect(res).toMatchObject({ status: 400, body: { error: { status: 'INVALID_ARGUMENT', message: expect.stringMatching(/context_id/), details: [{ reason: 'INVALID_PARAMS' }] } } });
    // The known ones, A2A-Version among them, still pass.
    expect((await call(`${instance()}/a2a/rest/tasks?pageSize=5&A2A-Version=1.0`, { headers: auth() })).status).toBe(200);
  });

  it('JSON-RPC: an unknown params key is invalid params naming it', async () => {
    const res = await rpc({ id: 5, method: 'ListTasks', params: { context_id: 'x' } });
    expect(res.body).toMatchObject({ id: 5, error: { code: -32602, message: expect.stringMatching(/context_id/) } });
  });

  it('pty-ws: an unknown payload key is INVALID_REQUEST with the A2A invalid-params error', async () => {
    const s = await server.createSession({}, ctl.token);
    const c = await TestClient.connect(s.attach_url, { token: ctl.token });
    await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    for (const payload of [{ page_size: 5, filtre: { status: 'TASK_STATE_COMPLETED' } }, { filter: { state: 'TASK_STATE_COMPLETED' } }]) {
      const id = c.send('ListTasks', payload);
      const err = await c.waitForFrame((f) => f.id === id, 'the ListTasks answer');
      expect(err.op, JSON.stringify(payload)).toBe('Error');
      expect(err.payload, JSON.stringify(payload)).toMatchObject({ code: 'INVALID_REQUEST', a2a_error: { code: -32602, data: [{ reason: 'INVALID_PARAMS' }] } });
    }
    const ok = c.send('ListTasks', { page_size: 5 });
    expect((await c.waitForFrame((f) => f.id === ok, 'the ListTasks answer')).op).toBe('ListTasks.Response');
    c.close();
  });
});

describe('pty-extensions/v1 rides only on pty-ws (pty-extensions §1)', () => {
  it('A2A-Extensions naming it is refused on JSON-RPC and HTTP+JSON; other extensions are ignored', async () => {
    const rpcRes = await rpc({ id: 7, method: 'ListTasks', params: {} }, { ...auth(), 'a2a-extensions': `https://example.com/ext/other, ${EXTENSION_URI}` });
    expect(rpcRes.body).toMatchObject({ id: 7, error: { code: -32004, data: [{ reason: 'UNSUPPORTED_OPERATION', metadata: { reason: 'extension.unsupported_on_binding', extension: EXTENSION_URI } }] } });
    const restRes = await call(`${instance()}/a2a/rest/tasks`, { headers: { ...auth(), 'a2a-extensions': EXTENSION_URI } });
    expect(restRes).toMatchObject({ status: 400, body: { error: { status: 'FAILED_PRECONDITION', details: [{ reason: 'UNSUPPORTED_OPERATION', metadata: { extension: EXTENSION_URI } }] } } });
    const fleet = await rpc({ id: 8, method: 'ListTasks', params: {} }, { ...auth(), 'a2a-extensions': EXTENSION_URI }, `${server.origin}/fleet/a2a/jsonrpc`);
    expect(fleet.body.error?.data?.[0]?.metadata?.extension).toBe(EXTENSION_URI);
    expect((await rpc({ id: 9, method: 'ListTasks', params: {} }, { ...auth(), 'a2a-extensions': 'https://example.com/ext/other' })).body).toMatchObject({ id: 9, result: {} });
  });

  it("the official SDK client sees UnsupportedOperationError, on both transports", async () => {
    for (const transport of TRANSPORTS) {
      const client = await a2aClient(server.origin, ctl.token, transport);
      const err = await rejection(client.listTasks(list({}), { serviceParameters: { 'A2A-Extensions': EXTENSION_URI } }));
      expect(err, transport).toBeInstanceOf(UnsupportedOperationError);
      expect((await client.listTasks(list({}))).tasks, transport).toBeInstanceOf(Array);
    }
  });
});

describe('task metadata', () => {
  it('keys are camelCase, as A2A JSON is; the snake_case ones stay readable for one release', async () => {
    const client = await a2aClient(server.origin, ctl.token, 'JSONRPC');
    const task = await client.sendMessage(send({ message: userText('exit 3') }));
    if (!('status' in task)) throw new Error('expected a task');
    expect(task.metadata).toMatchObject({ taskKind: 'command', command: 'exit 3', exitCode: 3, task_kind: 'command', exit_code: 3 });
    expect(task.status?.message?.metadata).toMatchObject({ exitCode: 3, exit_code: 3 });
  });
});

describe('the cards and the media type', () => {
  it('both AgentCards carry Cache-Control and an ETag, and answer 304 to If-None-Match', async () => {
    for (const url of [`${server.origin}/.well-known/agent-card.json`, `${server.origin}/fleet/.well-known/agent-card.json`]) {
      const first = await fetch(url);
      expect(first.headers.get('cache-control'), url).toMatch(/max-age=\d+/);
      const etag = first.headers.get('etag');
      expect(etag, url).toMatch(/^"[^"]+"$/);
      const again = await fetch(url, { headers: { 'if-none-match': etag! } });
      expect(again.status, url).toBe(304);
    }
  });

  it('HTTP+JSON answers are application/a2a+json; A2A-Version may travel in the query', async () => {
    const res = await fetch(`${instance()}/a2a/rest/tasks`, { headers: auth() });
    expect(res.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
    const version = await call(`${instance()}/a2a/rest/tasks?A2A-Version=0.3`, { headers: auth() });
    expect(version).toMatchObject({ status: 400, body: { error: { details: [{ reason: 'VERSION_NOT_SUPPORTED' }] } } });
    const rpcVersion = await rpc({ id: 3, method: 'ListTasks', params: {} }, auth(), `${instance()}/a2a/jsonrpc?A2A-Version=0.3`);
    expect(rpcVersion.body).toMatchObject({ id: 3, error: { code: -32009 } });
  });
});
