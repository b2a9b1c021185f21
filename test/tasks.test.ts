// The A2A task operations against the real server, a real shell and a real libSQL file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { ok, outputOf, run, text } from './helpers/tasks.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  token = server.devToken!;
});
afterAll(async () => {
  await server?.stop();
});

async function session(body: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${server.origin}/agents/local/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return ((await res.json()) as { attach_url: string }).attach_url;
}

async function agent(url: string, extra: { serviceParameters?: Record<string, unknown> } = {}): Promise<TestClient> {
  const c = await TestClient.connect(url, { token });
  await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
  if (extra.serviceParameters) await ok(c, 'ping', {}, { service_parameters: extra.serviceParameters }).catch(() => undefined);
  return c;
}

describe('command tasks', () => {
  it('runs a command in the shell and completes with its output', async () => {
    const c = await agent(await session());
    const task = await run(c, 'echo hello-$((6*7))');
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(outputOf(task)).toBe('hello-42\n');
    expect(task.metadata).toMatchObject({ exit_code: 0, command: 'echo hello-$((6*7))' });
    const failed = await run(c, 'echo oops >&2; exit_with() { return $1; }; exit_with 3');
    expect(failed.status.state).toBe('TASK_STATE_FAILED');
    expect(failed.status.message?.parts[0]?.text).toBe('exit status 3');
    expect(failed.metadata?.exit_code).toBe(3);
    expect(outputOf(failed)).toBe('oops\n');
    const got = await ok(c, 'GetTask', { task_id: task.id });
    expect(got.task).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
    c.close();
  });
});

void text;
