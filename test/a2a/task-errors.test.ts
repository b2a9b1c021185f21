// Every error the task operations answer with (docs/protocol.md §7.1), and what a
// pty:observe principal may and may not do with tasks (§7.2), against the real server.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../src/core/ids.ts';
import { TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { answer, connectAgent, ok, request, run, stream, text, updateIn, userMessage, type TaskJson } from '../helpers/tasks.ts';
import { newToken, writeTokenFile } from '../helpers/tokens.ts';

let server: TestServer;
const control = newToken();
const observe = newToken();

beforeAll(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'pty-ws-tokens-')), 'tokens.json');
  writeTokenFile(file, [
    { token: control, principal: 'agent', scopes: ['pty:control'], sessions: ['*'] },
    { token: observe, principal: 'watcher', scopes: ['pty:observe'], sessions: ['*'] },
  ]);
  server = await startTestServer({ PTY_WS_TOKENS_FILE: file });
});
afterAll(async () => {
  await server?.stop();
});

const session = async () => (await server.createSession({}, control)).attach_url;
const client = (url: string, token = control) => connectAgent(url, token);

/** The answer is an Error with this binding code, a populated a2a_error, and the connection lives on. */
async function fails(c: TestClient, op: string, payload: Record<string, unknown>, code: string, a2aCode: number) {
  const f = await request(c, op, payload);
  expect(f.op).toBe('Error');
  expect(f.payload).toMatchObject({ code, message: expect.any(String), retryable: expect.any(Boolean) });
  const a2a = f.payload.a2a_error as { code: number; message: string; data: Array<{ '@type': string; reason: string; domain: string }> };
  expect(a2a.code).toBe(a2aCode);
  expect(a2a.message).toBe(f.payload.message);
  expect(a2a.data[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', domain: 'a2a-protocol.org', reason: expect.any(String) });
  expect(c.closed).toBeNull();
  return f.payload;
}

describe('error codes of the task operations', () => {
  it('TASK_NOT_FOUND for every operation naming an unknown task, and for a task of another session', async () => {
    const c = await client(await session());
    const unknown = uuidv7();
    for (const op of ['GetTask', 'CancelTask', 'SubscribeToTask', 'Unsubscribe']) {
      const p = await fails(c, op, { task_id: unknown }, 'TASK_NOT_FOUND', -32001);
      expect(p.a2a_error).toMatchObject({ data: [{ reason: 'TASK_NOT_FOUND', metadata: { taskId: unknown } }] });
    }
    await fails(c, 'SendMessage', { message: userMessage([{ text: 'x' }], { taskId: unknown }) }, 'TASK_NOT_FOUND', -32001);
    const elsewhere = await run(await client(await session()), 'echo elsewhere');
    await fails(c, 'GetTask', { task_id: elsewhere.id }, 'TASK_NOT_FOUND', -32001);
    c.close();
  });

  it('TASK_NOT_CANCELABLE for a finished task; UNSUPPORTED_OPERATION to subscribe to it or message it', async () => {
    const c = await client(await session());
    const done = await run(c, 'true');
    await fails(c, 'CancelTask', { task_id: done.id }, 'TASK_NOT_CANCELABLE', -32002);
    await fails(c, 'SubscribeToTask', { task_id: done.id }, 'UNSUPPORTED_OPERATION', -32004);
    await fails(c, 'SendMessage', { message: userMessage([{ text: 'again' }], { taskId: done.id }) }, 'UNSUPPORTED_OPERATION', -32004);
    c.close();
  });

  it('UNSUPPORTED_OPERATION for the push-notification config operations (binding §4.7: the standard bindings have them); a webhook SendMessage cannot use is invalid', async () => {
    const c = await client(await session());
    for (const op of ['SetTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfig', 'DeleteTaskPushNotificationConfig']) {
      const p = await fails(c, op, { task_id: uuidv7() }, 'UNSUPPORTED_OPERATION', -32004);
      expect(p.message).toMatch(/JSON-RPC or HTTP\+JSON/);
    }
    const refused = await fails(c, 'SendMessage', { message: text('echo x'), configuration: { taskPushNotificationConfig: { url: 'https://10.0.0.1/hook' } } }, 'INVALID_REQUEST', -32602);
    expect(refused.message).toMatch(/10\.0\.0\.1, a private address/);
    await fails(c, 'SendMessage', { message: text('echo x'), configuration: { taskPushNotificationConfig: { url: 'https://hooks.example.com/a2a', token: 'line\nbreak' } } }, 'INVALID_REQUEST', -32602);
    c.close();
  });

  it('INVALID_REQUEST for malformed payloads, foreign contexts, unsupported parts and queued-task input', async () => {
    const c = await client(await session());
    await fails(c, 'SendMessage', {}, 'INVALID_REQUEST', -32600);
    await fails(c, 'SendMessage', { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x' }] } }, 'INVALID_REQUEST', -32600);
    await fails(c, 'SendMessage', { message: userMessage([]) }, 'INVALID_REQUEST', -32600);
    await fails(c, 'SendMessage', { message: userMessage([{ text: 'a', data: {} }]) }, 'INVALID_REQUEST', -32600);
    await fails(c, 'SendMessage', { message: userMessage([{ text: '  ' }]) }, 'INVALID_REQUEST', -32600);
    await fails(c, 'SendMessage', { message: userMessage([{ text: 'x' }], { contextId: uuidv7() }) }, 'INVALID_REQUEST', -32600);
    const url = await fails(c, 'SendMessage', { message: userMessage([{ url: 'https://example.test/f' }]) }, 'INVALID_REQUEST', -32005);
    expect(url.a2a_error).toMatchObject({ data: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }] });
    await fails(c, 'SendMessage', { message: userMessage([{ raw: 'not base64!' }]) }, 'INVALID_REQUEST', -32600);
    await fails(c, 'GetTask', {}, 'INVALID_REQUEST', -32600);
    await fails(c, 'GetTask', { task_id: 'x', history_length: -1 }, 'INVALID_REQUEST', -32600);
    await fails(c, 'CancelTask', { task_id: 7 }, 'INVALID_REQUEST', -32600);
    await fails(c, 'ListTasks', { filter: { status: 'DONE' } }, 'INVALID_REQUEST', -32600);

    // A task queued behind another takes no input until it runs.
    const first = (await ok(c, 'SendMessage', { message: text('sleep 30'), configuration: { returnImmediately: true } })).task as TaskJson;
    const second = (await ok(c, 'SendMessage', { message: text('echo queued'), configuration: { returnImmediately: true } })).task as TaskJson;
    expect(second.status.state).toBe('TASK_STATE_SUBMITTED');
    await fails(c, 'SendMessage', { message: userMessage([{ text: 'y' }], { taskId: second.id }) }, 'INVALID_REQUEST', -32600);
    // Cancelling a queued task needs no Ctrl-C; the running one goes on until cancelled.
    expect(((await ok(c, 'CancelTask', { task_id: second.id })).task as TaskJson).status).toMatchObject({ state: 'TASK_STATE_CANCELED', message: { parts: [{ text: 'canceled before it ran' }] } });
    expect(((await ok(c, 'GetTask', { task_id: first.id })).task as TaskJson).status.state).toBe('TASK_STATE_WORKING');
    await ok(c, 'CancelTask', { task_id: first.id });
    c.close();
  });

  it('RATE_LIMITED once a session has 256 unfinished tasks', async () => {
    const c = await client(await session());
    await ok(c, 'SendMessage', { message: text('sleep 30'), configuration: { returnImmediately: true } });
    for (let i = 1; i < 256; i++) c.send('SendMessage', { message: text(`echo ${i}`), configuration: { returnImmediately: true } });
    const p = await fails(c, 'SendMessage', { message: text('echo one-too-many') }, 'RATE_LIMITED', -32600);
    expect(p).toMatchObject({ retryable: true, a2a_error: { data: [{ reason: 'RATE_LIMITED' }] } });
    c.close();
  }, 60_000);

  it('REPLAY_OUT_OF_RANGE for a replay_from this session never issued', async () => {
    const c = await client(await session());
    const taskId = await stream(c, 'sleep 30');
    const other = await client(c.ws.url);
    // Like a join's: the subscription is accepted, the replay refused, live updates follow.
    const subId = other.send('SubscribeToTask', { task_id: taskId }, { replay_from: 999_999 });
    const err = await other.waitForFrame((f) => f.id === subId && f.op === 'Error', 'REPLAY_OUT_OF_RANGE');
    expect(err.payload).toMatchObject({ code: 'REPLAY_OUT_OF_RANGE', retryable: false, a2a_error: { code: -32600, data: [{ reason: 'REPLAY_OUT_OF_RANGE', metadata: { replay_from: '999999' } }] } });
    expect(other.frames().findIndex((f) => f.id === subId && f.op === 'SubscribeToTask.Accepted')).toBeLessThan(other.frames().indexOf(err));
    await ok(c, 'CancelTask', { task_id: taskId });
    c.close();
    other.close();
  });
});

describe('a pty:observe principal and tasks', () => {
  it('gets PERMISSION_DENIED for SendMessage, SendStreamingMessage and CancelTask, but may read and follow', async () => {
    const url = await session();
    const agent = await client(url);
    const watcher = await client(url, observe);
    for (const op of ['SendMessage', 'SendStreamingMessage']) {
      const p = await fails(watcher, op, { message: text('echo nope') }, 'PERMISSION_DENIED', -32600);
      expect(p.a2a_error).toMatchObject({ data: [{ reason: 'PERMISSION_DENIED' }] });
    }
    const taskId = await stream(agent, 'read x; echo "$x"');
    await updateIn(agent, taskId, 'TASK_STATE_WORKING');
    await fails(watcher, 'CancelTask', { task_id: taskId }, 'PERMISSION_DENIED', -32600);
    await fails(watcher, 'SendMessage', { message: userMessage([{ text: 'typed' }], { taskId }) }, 'PERMISSION_DENIED', -32600);
    const ack = await ok(watcher, 'SubscribeToTask', { task_id: taskId });
    expect((ack.task as TaskJson).id).toBe(taskId);
    await answer(agent, taskId, 'watched');
    const last = await updateIn(watcher, taskId, 'TASK_STATE_COMPLETED');
    // The terminal's echo of the typed line is in the output only if it came after the start mark.
    expect((last.payload.task as TaskJson).artifacts?.[0]?.parts[0]?.text).toMatch(/^(watched\n)?watched\n$/);
    expect((await ok(watcher, 'GetTask', { task_id: taskId })).task).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' } });
    expect(((await ok(watcher, 'ListTasks', {})).tasks as TaskJson[]).map((t) => t.id)).toEqual([taskId]);
    agent.close();
    watcher.close();
  });
});
