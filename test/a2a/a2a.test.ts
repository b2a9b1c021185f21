// The standard A2A v1.0 bindings (JSON-RPC and HTTP+JSON) driven by the official SDK client
// (@a2a-js/sdk) from the AgentCard URL, against the real router, PTY host and libSQL file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { A2AError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';
import { a2aClient, collect, get, list, rejection, send, stateName, textOf, TRANSPORTS, untilState, userText, type Transport } from '../helpers/a2a.ts';

const ctl: TestToken = { token: newToken(), principal: 'carla', scopes: ['pty:control'] };
const obs: TestToken = { token: newToken(), principal: 'otto', scopes: ['pty:observe'] };
const bob: TestToken = { token: newToken(), principal: 'bob', scopes: ['pty:control'] };

let server: TestServer;
let dir: string;
let tokensFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-a2a-'));
  tokensFile = join(dir, 'tokens.json');
  writeTokenFile(tokensFile, [ctl, obs, bob]);
  server = await startTestServer({ PTY_WS_TOKENS_FILE: tokensFile });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const states = (events: StreamResponse[]) =>
  events.map((e) => (e.payload?.$case === 'task' ? `task:${stateName(e.payload.value.status?.state)}` : e.payload?.$case === 'statusUpdate' ? stateName(e.payload.value.status?.state) : (e.payload?.$case ?? '?')));

const endpoint = (kind: 'jsonrpc' | 'rest') => `${server.origin}/agents/${server.config.instanceId}/a2a/${kind}`;
const rpc = async (body: string, token = ctl.token, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
  const res = await fetch(endpoint('jsonrpc'), { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body });
  return { status: res.status, body: (await res.json()) as { id: unknown; error?: { code: number; message: string; data?: Array<{ reason: string }> }; result?: unknown } };
};

describe('the AgentCard leads a generic A2A client to the standard bindings', () => {
  it('lists JSON-RPC first, then HTTP+JSON, then pty-ws, with absolute URLs, streaming and the bearer scheme', async () => {
    const card = (await (await fetch(`${server.origin}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    expect(card.supportedInterfaces).toEqual([
      { url: endpoint('jsonrpc'), protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: endpoint('rest'), protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: `${server.wsOrigin}/agents/local/sessions/{session_id}/attach`, protocolBinding: 'https://agentic-sandbox.aiwg.io/bindings/pty-ws/v1', protocolVersion: '1.0' },
    ]);
    expect(card).toMatchObject({ capabilities: { streaming: true, pushNotifications: true }, securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer' } } } });
    // With no preference, the SDK takes the card's first interface it speaks.
    const client = await a2aClient(server.origin, ctl.token, 'JSONRPC');
    expect(client.protocolVersion).toBe('1.0');
  });
});

describe.each(TRANSPORTS)('over %s', (transport: Transport) => {
  let client: Client;
  beforeAll(async () => {
    client = await a2aClient(server.origin, ctl.token, transport);
  });

  it('SendMessage without contextId starts a terminal session, runs the command there and completes with its output', async () => {
    const task = await client.sendMessage(send({ message: userText('echo hi') }));
    expect('status' in task && stateName(task.status?.state)).toBe('TASK_STATE_COMPLETED');
    if (!('status' in task)) throw new Error('expected a task');
    expect(textOf(task)).toContain('hi');
    expect(task.history.map((m) => m.role)).toEqual([1, 2]);
    // The context is a new session of this instance, made by the caller (its creator may end it, others may not).
    const auth = (t: TestToken) => ({ authorization: `Bearer ${t.token}` });
    const rec = (await (await fetch(`${server.origin}/agents/local/sessions/${task.contextId}`, { headers: auth(ctl) })).json()) as { state: string };
    expect(rec.state).toBe('running');
    expect((await fetch(`${server.origin}/agents/local/sessions/${task.contextId}`, { method: 'DELETE', headers: auth(bob) })).status).toBe(403);
    expect((await fetch(`${server.origin}/agents/local/sessions/${task.contextId}`, { method: 'DELETE', headers: auth(ctl) })).status).toBe(202);
  });

  it('chooses the new session host from message.metadata["pty-ws/session"], validated like a join', async () => {
    const task = await client.sendMessage(send({ message: userText('pwd; echo $GREETING', { metadata: { 'pty-ws/session': { cwd: '/tmp', env: { GREETING: 'hello-meta' }, label: 'a2a', terminal_size: { cols: 90, rows: 20 } } } }) }));
    if (!('status' in task)) throw new Error('expected a task');
    expect(textOf(task)).toMatch(/\/tmp[\s\S]*hello-meta/);
    const rec = (await (await fetch(`${server.origin}/agents/local/sessions/${task.contextId}`, { headers: { authorization: `Bearer ${ctl.token}` } })).json()) as Record<string, unknown>;
    expect(rec).toMatchObject({ label: 'a2a', cwd: '/tmp', terminal_size: { cols: 90, rows: 20 } });
    const bad = await rejection(client.sendMessage(send({ message: userText('true', { metadata: { 'pty-ws/session': { terminal_size: { cols: 0, rows: 5 } } } }) })));
    expect(bad.name).toBe('RequestMalformedError');
    expect(bad.message).toContain('pty-ws/session');
    expect(await rejection(client.sendMessage(send({ message: userText('true', { metadata: { 'pty-ws/session': { session_backend: 'zellij' } } }) })))).toBeInstanceOf(UnsupportedOperationError);
    // A message refused once its new session has started (an empty command) leaves no session running.
    const before = await runningSessions();
    const empty = await rejection(client.sendMessage(send({ message: userText('   ') })));
    expect(empty.message).toContain('empty');
    if (transport === 'JSONRPC') expect((empty as A2AError & { envelopeCode: number }).envelopeCode).toBe(-32602);
    await expect.poll(runningSessions).toBe(before);
  });

  it('SendStreamingMessage streams the task, its updates and its artifact in order, ending at the terminal state', async () => {
    const events = await collect(client.sendMessageStream(send({ message: userText('echo streamed-$((40+2))') })));
    expect(states(events)).toEqual(['task:TASK_STATE_SUBMITTED', 'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'artifactUpdate', 'TASK_STATE_COMPLETED']);
    const artifact = events.find((e) => e.payload?.$case === 'artifactUpdate');
    const content = artifact?.payload?.$case === 'artifactUpdate' ? artifact.payload.value.artifact?.parts[0]?.content : undefined;
    expect(content?.$case === 'text' && content.value).toContain('streamed-42');
  });

  it('streams an artifact larger than an SSE event the SDK reads (4 MiB) in chunks that add up to it', async () => {
    // ~4.5 MB of lines with colour escapes (each ESC is six characters as JSON).
    const command = `i=0; while [ $i -lt 60000 ]; do printf '\\033[31m%070d\\033[0m\\n' $i; i=$((i+1)); done`;
    const events = await collect(client.sendMessageStream(send({ message: userText(command) })));
    const chunks = events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' ? [e.payload.value] : []));
    expect(chunks.length).toBeGreaterThan(4);
    expect(chunks.map((c) => [c.append, c.lastChunk])).toEqual(chunks.map((_, i) => [i > 0, i === chunks.length - 1]));
    const streamed = chunks.flatMap((c) => c.artifact!.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : ''))).join('');
    expect(states(events).at(-1)).toBe('TASK_STATE_COMPLETED');
    const task = events.find((e) => e.payload?.$case === 'task');
    const id = task?.payload?.$case === 'task' ? task.payload.value.id : '';
    const stored = textOf(await client.getTask(get(id)));
    expect(stored.length).toBeGreaterThan(4_000_000);
    expect(streamed).toBe(stored);
  }, 60_000);

  it('GetTask returns the stored task, the newest historyLength messages only when asked', async () => {
    const sent = await client.sendMessage(send({ message: userText('echo got') }));
    if (!('status' in sent)) throw new Error('expected a task');
    const full = await client.getTask(get(sent.id));
    expect(full).toMatchObject({ id: sent.id, contextId: sent.contextId });
    expect(full.history).toHaveLength(2);
    expect(textOf(full)).toContain('got');
    const last = await client.getTask(get(sent.id, 1));
    expect(last.history.map((m) => m.role)).toEqual([2]);
    expect((await client.getTask(get(sent.id, 0))).history).toEqual([]);
    const missing = await rejection(client.getTask(get('0192f000-0000-7000-8000-000000000000')));
    expect(missing).toBeInstanceOf(TaskNotFoundError);
  });

  it('ListTasks filters by context, status and time, pages, and includes artifacts only when asked', async () => {
    const first = await client.sendMessage(send({ message: userText('echo one') }));
    if (!('status' in first)) throw new Error('expected a task');
    const contextId = first.contextId;
    const failed = await client.sendMessage(send({ message: userText('false', { contextId }) }));
    const third = await client.sendMessage(send({ message: userText('echo three', { contextId }) }));
    if (!('status' in failed) || !('status' in third)) throw new Error('expected tasks');
    expect(stateName(failed.status?.state)).toBe('TASK_STATE_FAILED');

    const all = await client.listTasks(list({ contextId }));
    expect(all.tasks.map((t) => t.id)).toEqual([third.id, failed.id, first.id]);
    expect(all).toMatchObject({ nextPageToken: '', totalSize: 3, pageSize: 50 });
    expect(all.tasks.every((t) => t.artifacts.length === 0)).toBe(true);
    expect(textOf((await client.listTasks(list({ contextId, includeArtifacts: true }))).tasks[0]!)).toContain('three');

    const page1 = await client.listTasks(list({ contextId, pageSize: 2 }));
    expect(page1.tasks.map((t) => t.id)).toEqual([third.id, failed.id]);
    expect(page1.nextPageToken).not.toBe('');
    const page2 = await client.listTasks(list({ contextId, pageSize: 2, pageToken: page1.nextPageToken }));
    expect(page2.tasks.map((t) => t.id)).toEqual([first.id]);
    expect(page2.nextPageToken).toBe('');

    expect((await client.listTasks(list({ contextId, status: 'TASK_STATE_FAILED' }))).tasks.map((t) => t.id)).toEqual([failed.id]);
    expect((await client.listTasks(list({ contextId, statusTimestampAfter: failed.status?.timestamp }))).tasks.map((t) => t.id)).toEqual([third.id]);
    expect((await client.listTasks(list({ contextId, historyLength: 1 }))).tasks[0]!.history).toHaveLength(1);
    // Instance-wide without a context: tasks of other sessions too.
    const wide = await client.listTasks(list({ pageSize: 100 }));
    expect(new Set(wide.tasks.map((t) => t.contextId)).size).toBeGreaterThan(1);
  });

  it('CancelTask stops a running sleep 60 with Ctrl-C; a second cancel is TaskNotCancelable', async () => {
    const sent = await client.sendMessage(send({ message: userText('sleep 60'), configuration: { returnImmediately: true } }));
    if (!('status' in sent)) throw new Error('expected a task');
    await untilState(client, sent.id, TaskState.TASK_STATE_WORKING);
    const t0 = Date.now();
    const canceled = await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    expect(stateName(canceled.status?.state)).toBe('TASK_STATE_CANCELED');
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(await rejection(client.cancelTask({ tenant: '', id: sent.id, metadata: undefined }))).toBeInstanceOf(TaskNotCancelableError);
  }, 30_000);

  it('SubscribeToTask streams a running task to its end; a finished task cannot be subscribed to', async () => {
    const sent = await client.sendMessage(send({ message: userText('sleep 1; echo subscribed'), configuration: { returnImmediately: true } }));
    if (!('status' in sent)) throw new Error('expected a task');
    await untilState(client, sent.id, TaskState.TASK_STATE_WORKING);
    const events = await collect(client.resubscribeTask({ tenant: '', id: sent.id }));
    expect(states(events)).toEqual(['task:TASK_STATE_WORKING', 'artifactUpdate', 'TASK_STATE_COMPLETED']);
    const err = await rejection(collect(client.resubscribeTask({ tenant: '', id: sent.id })));
    expect(err).toBeInstanceOf(UnsupportedOperationError);
  }, 30_000);

  it('a message with the contextId of a live session is typed into it, visibly to a pty-ws client attached there', async () => {
    const { session_id, attach_url } = await server.createSession({}, ctl.token);
    const watcher = await TestClient.connect(attach_url, { token: obs.token });
    await watcher.join({ role: 'observer' });
    const task = await client.sendMessage(send({ message: userText('echo typed-in-$((6*7))', { contextId: session_id }) }));
    if (!('status' in task)) throw new Error('expected a task');
    expect(task.contextId).toBe(session_id);
    expect(textOf(task)).toContain('typed-in-42');
    await watcher.waitForOutput('typed-in-42');
    expect(watcher.output()).toContain('echo typed-in-$((6*7))');
    // The same task over the pty-ws binding.
    const id = watcher.send('GetTask', { task_id: task.id });
    const answer = await watcher.waitForFrame((f) => f.id === id, 'GetTask.Response');
    expect(answer.payload.task).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
    watcher.close();
  }, 30_000);

  it('refuses an unknown, foreign or ended context with invalid params naming it', async () => {
    const unknown = '0192f000-0000-7000-8000-00000000abcd';
    const err = await rejection(client.sendMessage(send({ message: userText('true', { contextId: unknown }) })));
    expect(err.name).toBe('RequestMalformedError');
    expect(err.message).toContain(unknown);
    if (transport === 'HTTP+JSON') expect((err as A2AError & { statusCode: number }).statusCode).toBe(400);
    else expect((err as A2AError & { envelopeCode: number }).envelopeCode).toBe(-32602);

    const ran = await client.sendMessage(send({ message: userText('echo soon-ended') }));
    if (!('status' in ran)) throw new Error('expected a task');
    const session_id = ran.contextId;
    expect((await fetch(`${server.origin}/agents/local/sessions/${session_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ctl.token}` } })).status).toBe(202);
    await untilSessionClosed(session_id);
    const closed = await rejection(client.sendMessage(send({ message: userText('echo again', { contextId: session_id }) })));
    expect(closed.name).toBe('RequestMalformedError');
    expect(closed.message).toContain(session_id);
  }, 30_000);

  it('an observe bearer may read but not send or cancel (403); a missing bearer is 401', async () => {
    const observer = await a2aClient(server.origin, obs.token, transport);
    const done = await client.sendMessage(send({ message: userText('echo readable') }));
    if (!('status' in done)) throw new Error('expected a task');
    expect((await observer.getTask(get(done.id))).id).toBe(done.id);
    expect((await observer.listTasks(list({ contextId: done.contextId }))).tasks).toHaveLength(1);
    const refused = await rejection(observer.sendMessage(send({ message: userText('echo nope') })));
    expect(refused.message).toContain('pty:control');
    if (transport === 'HTTP+JSON') expect((refused as A2AError & { statusCode: number }).statusCode).toBe(403);
    const cancel = await rejection(observer.cancelTask({ tenant: '', id: done.id, metadata: undefined }));
    expect(cancel.message).toContain('pty:control');
    const anonymous = await fetch(transport === 'JSONRPC' ? endpoint('jsonrpc') : `${endpoint('rest')}/tasks`, {
      method: transport === 'JSONRPC' ? 'POST' : 'GET',
      headers: { 'content-type': 'application/json' },
      body: transport === 'JSONRPC' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }) : undefined,
    });
    expect(anonymous.status).toBe(401);
  });
});

async function runningSessions(): Promise<number> {
  const res = await fetch(`${server.origin}/agents/local/sessions`, { headers: { authorization: `Bearer ${ctl.token}` } });
  return ((await res.json()) as { sessions: Array<{ state: string }> }).sessions.filter((s) => s.state === 'running').length;
}

async function untilSessionClosed(id: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const rec = (await (await fetch(`${server.origin}/agents/local/sessions/${id}`, { headers: { authorization: `Bearer ${ctl.token}` } })).json()) as { state: string };
    if (rec.state === 'closed') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`session ${id} did not close`);
}

describe('one task world across the three bindings', () => {
  it('a task sent over JSON-RPC is the same task over HTTP+JSON and over pty-ws', async () => {
    const jsonrpc = await a2aClient(server.origin, ctl.token, 'JSONRPC');
    const rest = await a2aClient(server.origin, ctl.token, 'HTTP+JSON');
    const sent = await jsonrpc.sendMessage(send({ message: userText('echo shared') }));
    if (!('status' in sent)) throw new Error('expected a task');
    const viaRest = await rest.getTask(get(sent.id));
    expect(viaRest).toEqual(await jsonrpc.getTask(get(sent.id)));
    expect(textOf(viaRest)).toContain('shared');
  });

  it('and the reverse: a task sent over pty-ws is read and followed over both standard bindings', async () => {
    const { session_id, attach_url } = await server.createSession({}, ctl.token);
    const agent = await TestClient.connect(attach_url, { token: ctl.token });
    await agent.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    const id = agent.send('SendMessage', { message: userText('sleep 1; echo from-pty-ws'), configuration: { returnImmediately: true } });
    const accepted = await agent.waitForFrame((f) => f.id === id, 'SendMessage.Response');
    const taskId = (accepted.payload.task as { id: string }).id;
    const rest = await a2aClient(server.origin, ctl.token, 'HTTP+JSON');
    const jsonrpc = await a2aClient(server.origin, ctl.token, 'JSONRPC');
    await untilState(rest, taskId, TaskState.TASK_STATE_WORKING);
    const events = await collect(jsonrpc.resubscribeTask({ tenant: '', id: taskId }));
    expect(states(events).at(-1)).toBe('TASK_STATE_COMPLETED');
    const done = await rest.getTask(get(taskId));
    expect(done.contextId).toBe(session_id);
    expect(textOf(done)).toContain('from-pty-ws');
    agent.close();
  }, 30_000);
});

describe('ListTasks is limited to the sessions the bearer may see', () => {
  it('a bearer restricted to one session lists its tasks only, and the others are not found', async () => {
    const client = await a2aClient(server.origin, ctl.token, 'JSONRPC');
    const mine = await client.sendMessage(send({ message: userText('echo mine') }));
    const theirs = await client.sendMessage(send({ message: userText('echo theirs') }));
    if (!('status' in mine) || !('status' in theirs)) throw new Error('expected tasks');
    const narrow: TestToken = { token: newToken(), principal: 'nina', scopes: ['pty:control'], sessions: [mine.contextId] };
    writeTokenFile(tokensFile, [ctl, obs, bob, narrow]);
    expect(await server.reloadTokens()).toBe(true);
    for (const transport of TRANSPORTS) {
      const nina = await a2aClient(server.origin, narrow.token, transport);
      const listed = await nina.listTasks(list({ pageSize: 100 }));
      // Only the covered session's tasks (the loop's first pass adds one there).
      expect(listed.tasks.map((t) => t.id)).toContain(mine.id);
      expect(new Set(listed.tasks.map((t) => t.contextId))).toEqual(new Set([mine.contextId]));
      expect(listed.totalSize).toBe(listed.tasks.length);
      expect(await rejection(nina.getTask(get(theirs.id)))).toBeInstanceOf(TaskNotFoundError);
      expect(await rejection(nina.cancelTask({ tenant: '', id: theirs.id, metadata: undefined }))).toBeInstanceOf(TaskNotFoundError);
      // A restricted bearer cannot start new sessions; it may send to the one it covers.
      expect((await rejection(nina.sendMessage(send({ message: userText('true') })))).message).toContain('restricted');
      const there = await nina.sendMessage(send({ message: userText('echo covered', { contextId: mine.contextId }) }));
      expect('status' in there && textOf(there)).toContain('covered');
    }
  }, 30_000);
});

describe('JSON-RPC envelope errors', () => {
  it('answers a parse error, an invalid request and an unknown method with JSON-RPC codes', async () => {
    const parse = await rpc('{not json');
    expect(parse).toMatchObject({ status: 200, body: { id: null, error: { code: -32700 } } });
    const invalid = await rpc(JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'GetTask' }));
    expect(invalid).toMatchObject({ status: 200, body: { error: { code: -32600 } } });
    expect((await rpc(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'GetTask' }]))).body.error?.code).toBe(-32600);
    const unknown = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'tasks/get', params: {} }));
    expect(unknown).toMatchObject({ status: 200, body: { id: 'x', error: { code: -32601 } } });
    const params = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 5 } }));
    expect(params).toMatchObject({ body: { id: 2, error: { code: -32602, data: [{ reason: 'INVALID_PARAMS' }] } } });
    const notFound = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: 'nope' } }));
    expect(notFound).toMatchObject({ body: { id: 3, error: { code: -32001, data: [{ reason: 'TASK_NOT_FOUND' }] } } });
    const plain = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ListTasks', params: {} }), ctl.token, { 'content-type': 'text/plain' });
    expect(plain.body.error?.code).toBe(-32005);
    const push = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'CreateTaskPushNotificationConfig', params: { taskId: 'x', url: 'https://hooks.example.com/a2a' } }));
    expect(push.body).toMatchObject({ id: 5, error: { code: -32001, data: [{ reason: 'TASK_NOT_FOUND' }] } });
    const pushObserver = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ListTaskPushNotificationConfigs', params: { taskId: 'x' } }), obs.token);
    expect(pushObserver.status).toBe(403);
    const refused = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'SendMessage', params: { message: userText('true') } }), obs.token);
    expect(refused).toMatchObject({ status: 403, body: { id: 8, error: { data: [{ reason: 'PERMISSION_DENIED' }] } } });
    // The card declares no extended card: A2A v1.0 (§3.3.4) asks for UnsupportedOperationError, not
    // ExtendedAgentCardNotConfigured (which is for an agent that declares one and has none).
    const extended = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'GetExtendedAgentCard', params: {} }));
    expect(extended.body.error).toMatchObject({ code: -32004, data: [{ reason: 'UNSUPPORTED_OPERATION' }] });
    const extendedRest = await fetch(`${endpoint('rest')}/extendedAgentCard`, { headers: { authorization: `Bearer ${ctl.token}` } });
    expect(extendedRest.status).toBe(400);
    expect(await extendedRest.json()).toMatchObject({ error: { details: [{ reason: 'UNSUPPORTED_OPERATION' }] } });
  });

  it('answers the HTTP+JSON push-config and unknown paths with A2A errors', async () => {
    const auth = { authorization: `Bearer ${ctl.token}`, 'content-type': 'application/json' };
    const push = await fetch(`${endpoint('rest')}/tasks/x/pushNotificationConfigs`, { method: 'POST', headers: auth, body: '{}' });
    expect(push.status).toBe(400);
    expect(await push.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringMatching(/url is required/), details: [{ reason: 'INVALID_PARAMS' }] } });
    const pushConfig = await fetch(`${endpoint('rest')}/tasks/x/pushNotificationConfigs/c1`, { headers: auth });
    expect(pushConfig.status).toBe(404);
    expect(await pushConfig.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND', details: [{ reason: 'TASK_NOT_FOUND' }] } });
    expect((await fetch(`${endpoint('rest')}/tasks/x:frobnicate`, { method: 'POST', headers: auth })).status).toBe(404);
    expect((await fetch(`${endpoint('rest')}/message:send`, { method: 'GET', headers: auth })).status).toBe(405);
    const badEscape = await fetch(`${endpoint('rest')}/tasks/%E0%A4%A`, { headers: auth });
    expect(badEscape.status).toBe(400);
    expect(await badEscape.json()).toMatchObject({ error: { status: 'INVALID_ARGUMENT', details: [{ reason: 'INVALID_PARAMS' }] } });
    const rest = await a2aClient(server.origin, ctl.token, 'HTTP+JSON');
    const sent = await rest.sendMessage(send({ message: userText('echo escaped') }));
    const encoded = encodeURIComponent('id' in sent ? sent.id : '');
    expect(((await (await fetch(`${endpoint('rest')}/tasks/${encoded}`, { headers: auth })).json()) as { id: string }).id).toBe('id' in sent ? sent.id : '?');
    const notJson = await fetch(`${endpoint('rest')}/message:send`, { method: 'POST', headers: { authorization: auth.authorization, 'content-type': 'text/plain' }, body: '{}' });
    expect(notJson.status).toBe(400);
  });
});
