// Hostile JSON on the A2A bindings and REST (docs/security.md, attack 8): a method name that is a
// property of every JavaScript object, and a body nested 50,000 levels deep. Each gets its clear
// error, runs nothing, and leaves no error in the log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({}, {}, { defaultSession: false });
});
afterAll(async () => {
  await server?.stop();
});

async function post(path: string, body: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${server.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.devToken}` },
    body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const sessionCount = async () => {
  const res = await fetch(`${server.origin}/agents/${server.config.instanceId}/sessions`, { headers: { authorization: `Bearer ${server.devToken}` } });
  return ((await res.json()) as { sessions: unknown[] }).sessions.length;
};
const errorLines = () => server.logs.filter((l) => (JSON.parse(l) as { level: string }).level === 'error');
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const ENDPOINTS = ['/agents/local/a2a/jsonrpc', '/fleet/a2a/jsonrpc'];

describe('hostile JSON-RPC', () => {
  for (const path of ENDPOINTS) {
    it(`${path}: a method named after Object.prototype's properties is Method not found`, async () => {
      for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
        const { status, json } = await post(path, JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: {} }));
        expect(status, method).toBeLessThan(500);
        expect(json, method).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });
      }
      expect(errorLines()).toEqual([]);
    });

    it(`${path}: a SendMessage nested 50,000 levels deep is refused before anything runs`, async () => {
      const before = await sessionCount();
      const body = `{"jsonrpc":"2.0","id":8,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"echo deep-ran"}],"metadata":${nested(50_000)}}}}`;
      const { status, json } = await post(path, body);
      expect(status).toBeLessThan(500);
      expect(json).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringMatching(/nests deeper than 32 levels/) } });
      expect(await sessionCount()).toBe(before);
      expect(errorLines()).toEqual([]);
    });
  }

  it('REST: a session body nested 50,000 levels deep is a 400, and creates nothing', async () => {
    const before = await sessionCount();
    const { status, json } = await post(`/agents/${server.config.instanceId}/sessions`, `{"label":"deep","env":${nested(50_000)}}`);
    expect(status).toBe(400);
    expect(JSON.stringify(json)).toMatch(/nests deeper than 32 levels/);
    expect(await sessionCount()).toBe(before);
    expect(errorLines()).toEqual([]);
  });
});
