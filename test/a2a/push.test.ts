// Push notifications (docs/a2a.md, "Push notifications") against the real router, PTY host and
// libSQL file, set with the official SDK's client (@a2a-js/sdk) on both standard bindings and with
// a pty-ws SendMessage, delivered to real HTTP webhooks on loopback in this process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTaskPushNotificationConfigRequest, GetTaskPushNotificationConfigRequest, ListTaskPushNotificationConfigsRequest, TaskPushNotificationConfig, TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createClient } from '@libsql/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUSH_SETTINGS, type PushSettings } from '../../src/core/config.ts';
import type { WebhookTransport } from '../../src/ports/webhook-transport.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';
import { a2aClient, rejection, send, TRANSPORTS, untilState, userText, type Transport } from '../helpers/a2a.ts';
import { connectAgent, ok, text } from '../helpers/tasks.ts';
import { until } from '../helpers/wait.ts';
import { described, startWebhook, taskOf, type Webhook } from '../helpers/webhook.ts';

const carla: TestToken = { token: newToken(), principal: 'carla', scopes: ['pty:control'] };
const bob: TestToken = { token: newToken(), principal: 'bob', scopes: ['pty:control'] };
const otto: TestToken = { token: newToken(), principal: 'otto', scopes: ['pty:observe'] };

/** Retries within a test's patience: 6 tries, waits of 100 ms doubling up to 400 ms. */
const QUICK: PushSettings = { ...PUSH_SETTINGS, firstRetryMs: 100, maxRetryMs: 400, idlePollMs: 500 };
const LOOPBACK = { PTY_WS_PUSH_ALLOW_HOSTS: '127.0.0.1', PTY_WS_PUSH_ALLOW_HTTP_LOOPBACK: '1' };

let tokensDir: string;
let env: Record<string, string>;
let server: TestServer;
let hook: Webhook;

beforeAll(async () => {
  tokensDir = mkdtempSync(join(tmpdir(), 'pty-ws-push-'));
  writeTokenFile(join(tokensDir, 'tokens.json'), [carla, bob, otto]);
  env = { PTY_WS_TOKENS_FILE: join(tokensDir, 'tokens.json'), ...LOOPBACK };
  server = await startTestServer(env, {}, { overrides: { push: QUICK } });
  hook = await startWebhook();
});
afterAll(async () => {
  await server?.stop();
  await hook?.close();
  rmSync(tokensDir, { recursive: true, force: true });
});

const forTask = (w: Webhook, taskId: string) => w.delivered().filter((r) => taskOf(r) === taskId);
const statesOf = (w: Webhook, taskId: string) => forTask(w, taskId).map(described);
const untilDelivered = (w: Webhook, taskId: string, last: string, ms = 20_000) => until(() => statesOf(w, taskId).includes(last) && statesOf(w, taskId), `${last} for ${taskId} at the webhook`, ms);
const withPush = (command: string, config: Record<string, unknown>, configuration: Record<string, unknown> = {}) =>
  send({ message: userText(command), configuration: { taskPushNotificationConfig: config, ...configuration } });
const taskId = (t: unknown) => (t as { id: string }).id;

describe.each(TRANSPORTS)('over %s', (transport: Transport) => {
  let client: Client;
  beforeAll(async () => {
    client = await a2aClient(server.origin, carla.token, transport);
  });

  it('a webhook set with SendMessage gets every state change and the output, in order, with the token', async () => {
    const task = await client.sendMessage(withPush('echo pushed-$((6*7))', { url: hook.url, token: `tok-${transport}` }));
    const id = taskId(task);
    expect(await untilDelivered(hook, id, 'TASK_STATE_COMPLETED')).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED']);
    for (const r of forTask(hook, id)) {
      expect(r.headers['x-a2a-notification-token']).toBe(`tok-${transport}`);
      expect(r.headers['content-type']).toBe('application/a2a+json');
      expect(r.headers.authorization).toBeUndefined();
    }
    const artifact = forTask(hook, id).find((r) => r.event.payload?.$case === 'artifactUpdate')!.event.payload;
    expect(artifact?.$case === 'artifactUpdate' && artifact.value.artifact?.parts[0]?.content).toMatchObject({ $case: 'text', value: expect.stringContaining('pushed-42') });
  });

  it('CreateTaskPushNotificationConfig on a running task: Authorization from its authentication; Get, List and Delete are the creator\'s', async () => {
    const task = await client.sendMessage(send({ message: userText('sleep 1; echo late'), configuration: { returnImmediately: true } }));
    const id = taskId(task);
    const created = await client.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({ taskId: id, id: 'mine', url: hook.url, authentication: { scheme: 'Bearer', credentials: 'hook-secret' } }),
    );
    expect(created).toMatchObject({ id: 'mine', taskId: id, url: hook.url, authentication: { scheme: 'Bearer', credentials: 'hook-secret' } });
    expect(await client.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId: id, id: 'mine' }))).toMatchObject({ id: 'mine', url: hook.url });
    expect((await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: id }))).configs.map((c) => c.id)).toEqual(['mine']);
    // Another principal with pty:control sees none of carla's configs; an observer may not ask.
    const other = await a2aClient(server.origin, bob.token, transport);
    expect((await other.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: id }))).configs).toEqual([]);
    await rejection(other.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId: id, id: 'mine' })));
    const observer = await a2aClient(server.origin, otto.token, transport);
    expect(String(await rejection(observer.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: id }))))).toMatch(/pty:control/);

    expect(await untilDelivered(hook, id, 'TASK_STATE_COMPLETED')).toEqual(['artifact', 'TASK_STATE_COMPLETED']);
    for (const r of forTask(hook, id)) expect(r.headers.authorization).toBe('Bearer hook-secret');
    await client.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: id, id: 'mine' }));
    expect((await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: id }))).configs).toEqual([]);
  });

  it('a webhook that fails twice still gets every notification, in order', async () => {
    hook.answer(500, 503);
    const task = await client.sendMessage(withPush('echo retried', { url: hook.url, token: 't' }));
    const id = taskId(task);
    expect(await untilDelivered(hook, id, 'TASK_STATE_COMPLETED')).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED']);
    // The first notification was refused twice, then taken.
    expect(hook.received.filter((r) => taskOf(r) === id).map((r) => r.status)).toEqual([500, 503, 200, 200, 200, 200]);
  });
});

it('the fleet agent sets and reads the configs of a task: the same rows, sent by the instance owning it', async () => {
  const fleet = await a2aClient(`${server.origin}/fleet/`, carla.token, 'HTTP+JSON');
  const instance = await a2aClient(server.origin, carla.token, 'JSONRPC');
  const id = taskId(await instance.sendMessage(send({ message: userText('sleep 2; echo via-fleet'), configuration: { returnImmediately: true } })));
  await fleet.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({ taskId: id, id: 'fleet', url: hook.url }));
  expect(await instance.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId: id, id: 'fleet' }))).toMatchObject({ id: 'fleet', url: hook.url });
  expect(await untilDelivered(hook, id, 'TASK_STATE_COMPLETED')).toEqual(['artifact', 'TASK_STATE_COMPLETED']);
  await fleet.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: id, id: 'fleet' }));
  expect((await instance.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: id }))).configs).toEqual([]);
});

it('a pty-ws SendMessage sets a webhook with configuration.taskPushNotificationConfig', async () => {
  const { session_id } = await server.createSession({}, carla.token);
  const c = await connectAgent(server.attachUrl(session_id), carla.token);
  const task = (await ok(c, 'SendMessage', { message: text('echo over-pty-ws'), configuration: { taskPushNotificationConfig: { url: hook.url, token: 'ws' } } })).task as { id: string };
  expect(await untilDelivered(hook, task.id, 'TASK_STATE_COMPLETED')).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED']);
  c.close();
});

describe('the webhook policy', () => {
  it('refuses loopback, private and link-local webhooks without the allow-list, and plain http', async () => {
    const strict = await startTestServer({ PTY_WS_TOKENS_FILE: join(tokensDir, 'tokens.json') }, {}, { overrides: { push: QUICK } });
    try {
      const client = await a2aClient(strict.origin, carla.token, 'JSONRPC');
      for (const [url, why] of [
        [hook.url, /must be https/],
        [`https://127.0.0.1:${hook.port}/hook`, /127\.0\.0\.1, a loopback address/],
        ['https://localhost/hook', /a loopback address/],
        ['https://10.1.2.3/hook', /a private address/],
        ['https://169.254.169.254/latest', /a link-local address/],
        ['https://[::ffff:192.168.1.1]/hook', /a private address/],
        ['https://user:pw@example.com/hook', /user name or password/],
      ] as const) {
        const e = await rejection(client.sendMessage(withPush('echo never', { url })));
        expect(String(e), url).toMatch(why);
      }
    } finally {
      await strict.stop();
    }
  });
});

describe('the outbox', () => {
  it('a router restart while a notification waits for its next try still delivers everything, in order', async () => {
    const w = await startWebhook();
    w.failAll(503);
    const first = await startTestServer(env, {}, { overrides: { push: { ...QUICK, firstRetryMs: 1000, maxRetryMs: 1000 } } });
    let second: TestServer | undefined;
    try {
      const client = await a2aClient(first.origin, carla.token, 'JSONRPC');
      const id = taskId(await client.sendMessage(withPush('echo across-restart', { url: w.url, token: 'r' })));
      await until(() => w.received.length >= 1, 'a first, failed try');
      await first.stop({ keepDir: true });
      const tries = w.received.length;
      w.heal();
      second = await startTestServer(env, {}, { dir: first.dir, overrides: { push: QUICK } });
      expect(await untilDelivered(w, id, 'TASK_STATE_COMPLETED')).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED']);
      expect(tries).toBeLessThan(6);
    } finally {
      await (second ?? first).stop();
      await w.close();
    }
  });

  it('push configs survive a restart and go with their task', async () => {
    const w = await startWebhook();
    const first = await startTestServer(env, {}, { overrides: { push: QUICK } });
    let second: TestServer | undefined;
    try {
      const client = await a2aClient(first.origin, carla.token, 'HTTP+JSON');
      const id = taskId(await client.sendMessage(send({ message: userText('sleep 30'), configuration: { returnImmediately: true } })));
      await untilState(client, id, TaskState.TASK_STATE_WORKING);
      await client.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({ taskId: id, id: 'kept', url: w.url, token: 'k' }));
      await first.stop({ keepDir: true });
      second = await startTestServer(env, {}, { dir: first.dir, overrides: { push: QUICK } });
      const again = await a2aClient(second.origin, carla.token, 'HTTP+JSON');
      expect(await again.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId: id, id: 'kept' }))).toMatchObject({ id: 'kept', url: w.url, token: 'k' });
      // The stop ended the session, and with it the command: the webhook hears that too. Whether
      // the first router wrote the end (with the output so far) or the second found it unfinished
      // depends on how far the stop got; either way the end arrives once, last.
      const heard = await untilDelivered(w, id, 'TASK_STATE_FAILED');
      expect([['artifact', 'TASK_STATE_FAILED'], ['TASK_STATE_FAILED']]).toContainEqual(heard);
      // A task's rows removed (by hand: nothing here deletes tasks) take its configs along.
      const db = createClient({ url: `file:${join(second.dir, 'pty-ws.db')}` });
      try {
        await db.execute({ sql: 'delete from tasks where id = ?', args: [id] });
        expect((await db.execute({ sql: 'select count(*) as n from push_configs where task_id = ?', args: [id] })).rows[0]).toMatchObject({ n: 0 });
      } finally {
        db.close();
      }
      await rejection(again.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId: id, id: 'kept' })));
    } finally {
      await (second ?? first).stop();
      await w.close();
    }
  });

  it('checks the address again before every delivery: a name that now resolves to loopback is not sent to, and ends a dead letter', async () => {
    const w = await startWebhook();
    let lookups = 0;
    let posts = 0;
    // hooks.example.test resolves to a public address when the config is set, then to loopback (DNS rebinding).
    const rebinding = (t: WebhookTransport): WebhookTransport => ({
      resolve: async (name) => (name === 'hooks.example.test' ? [lookups++ === 0 ? '93.184.216.34' : '127.0.0.1'] : t.resolve(name)),
      post: (req) => {
        posts++;
        return t.post(req);
      },
    });
    const s = await startTestServer({ PTY_WS_TOKENS_FILE: join(tokensDir, 'tokens.json') }, {}, { overrides: { push: { ...QUICK, attempts: 2 } }, decorateWebhooks: rebinding });
    try {
      const client = await a2aClient(s.origin, carla.token, 'JSONRPC');
      const id = taskId(await client.sendMessage(withPush('echo rebound', { url: `https://hooks.example.test:${w.port}/hook` })));
      const dead = await until(() => s.logs.filter((l) => l.includes('push: dead letter') && l.includes(id)).length >= 4 && s.logs, 'four dead letters');
      expect(dead.find((l) => l.includes('push: a notification was not delivered'))).toMatch(/127\.0\.0\.1, a loopback address/);
      expect(posts).toBe(0);
      expect(w.received).toEqual([]);
      const metrics = await (await fetch(`${s.origin}/metrics`, { headers: { authorization: `Bearer ${otto.token}` } })).text();
      expect(metrics).toMatch(/pty_ws_push_dead_letters_total\{reason="refused"\} 4/);
    } finally {
      await s.stop();
      await w.close();
    }
  });
});
