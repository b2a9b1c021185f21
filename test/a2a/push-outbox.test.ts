// The push outbox's worker (src/a2a/push-worker.ts) over a real libSQL file and real HTTP webhooks,
// without a router: two routers of one instance on one database never both send a notification,
// and a failing webhook is tried with growing waits, then given up on as a dead letter.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebhookSender } from '../../src/a2a/push-sender.ts';
import { PushWorker } from '../../src/a2a/push-worker.ts';
import { WebhookPolicy } from '../../src/a2a/webhook-policy.ts';
import { nodeWebhookTransport } from '../../src/adapter/node/webhook-transport.ts';
import { PUSH_SETTINGS, type PushSettings } from '../../src/core/config.ts';
import type { CounterName, Labels, Metrics } from '../../src/core/metrics.ts';
import type { Logger } from '../../src/ports/logger.ts';
import type { Timers } from '../../src/ports/clock.ts';
import type { Task } from '../../src/protocol/a2a.ts';
import { openStore } from '../../storage/open.ts';
import type { LibsqlStore } from '../../storage/store.ts';
import { until } from '../helpers/wait.ts';
import { described, startWebhook, type Webhook } from '../helpers/webhook.ts';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const quiet: Logger = { log: () => undefined, child: () => quiet };
const realTimers: Timers = {
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};

let dir: string;
let hook: Webhook;
const stores: LibsqlStore[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-outbox-'));
  hook = await startWebhook();
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  await hook.close();
  rmSync(dir, { recursive: true, force: true });
});

async function store(): Promise<LibsqlStore> {
  const s = await openStore({ url: `file:${join(dir, 'db')}` });
  stores.push(s);
  return s;
}

function worker(s: LibsqlStore, o: { owner: string; settings?: Partial<PushSettings>; metrics?: Metrics; clock?: { now(): number }; timers?: Timers; random?: () => number }): PushWorker {
  const sender = new WebhookSender({ transport: nodeWebhookTransport(), policy: new WebhookPolicy({ pushAllowHosts: ['127.0.0.1'], pushAllowHttpLoopback: true }), timeoutMs: 5000 });
  return new PushWorker({
    store: s.push,
    sender,
    instanceId: 'inst',
    owner: o.owner,
    settings: { ...PUSH_SETTINGS, ...o.settings },
    clock: o.clock ?? { now: Date.now },
    timers: o.timers ?? realTimers,
    logger: quiet,
    metrics: o.metrics ?? { inc: () => undefined, observe: () => undefined },
    random: o.random,
  });
}

/** A session of `inst` with one task, and `configs` webhook configs on it; returns the task. */
async function taskWithConfigs(s: LibsqlStore, configs: number, at: number): Promise<Task> {
  const iso = new Date(at).toISOString();
  await s.createSession({ id: 'sess', instanceId: 'inst', backend: 'native', sessionClass: 'direct', argv: null, command: null, cwd: null, env: {}, cols: 80, rows: 24, label: null, state: 'running', createdAt: iso, closedAt: null, exitCode: null, closeReason: null, createdBy: null, hadMember: false, createdVia: null, host: null });
  const task: Task = { id: 'task', contextId: 'sess', status: { state: 'TASK_STATE_SUBMITTED', timestamp: iso } };
  const pushConfigs = Array.from({ length: configs }, (_, i) => ({ key: `key-${i}`, taskId: task.id, principalId: 'p', configId: `c${i}`, url: `${hook.url}?config=${i}`, token: null, authScheme: null, authCredentials: null, createdAt: iso }));
  await s.tasks.saveTask({ task, pushConfigs });
  return task;
}

describe('the push outbox', () => {
  it('two routers of one instance on one database deliver every notification exactly once, each config in order', async () => {
    const a = await store();
    const b = await store();
    const task = await taskWithConfigs(a, 3, Date.now());
    for (let i = 1; i <= 20; i++) await a.tasks.saveTask({ task: { ...task, status: { state: 'TASK_STATE_WORKING', timestamp: new Date(Date.now() + i).toISOString(), message: { messageId: `m${i}`, role: 'ROLE_AGENT', parts: [{ text: `step ${i}` }] } } } });
    const workers = [worker(a, { owner: 'router-a' }), worker(b, { owner: 'router-b' })];
    for (const w of workers) w.wake();
    await until(() => hook.received.length >= 63, 'every notification', 20_000);
    await new Promise((r) => setTimeout(r, 300));
    await Promise.all(workers.map((w) => w.stop()));
    expect(hook.received).toHaveLength(63);
    for (let c = 0; c < 3; c++) {
      const steps = hook.received.filter((r) => r.path.endsWith(`config=${c}`));
      expect(steps.map(described)).toEqual(['TASK_STATE_SUBMITTED', ...new Array<string>(20).fill('TASK_STATE_WORKING')]);
      expect(steps.slice(1).map((r) => textOf(r))).toEqual(Array.from({ length: 20 }, (_, i) => `step ${i + 1}`));
    }
  });

  it('retries a failing webhook with doubling, jittered waits, then gives up on it as a dead letter', async () => {
    const s = await store();
    let now = T0;
    const counted: Array<[CounterName, Labels | undefined]> = [];
    const w = worker(s, {
      owner: 'router',
      settings: { attempts: 4, firstRetryMs: 1000, maxRetryMs: 3000 },
      clock: { now: () => now },
      // The worker's own timers never fire here: the test moves the clock and wakes it.
      timers: { after: () => ({ cancel: () => undefined }) },
      random: () => 0.5,
      metrics: { inc: (name, labels) => void counted.push([name, labels]), observe: () => undefined },
    });
    await taskWithConfigs(s, 1, T0);
    hook.failAll(500);
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      w.wake();
      await until(() => hook.received.length === attempt, `try ${attempt}`);
      const row = await until(async () => {
        const [r] = await s.push.due('inst', Number.MAX_SAFE_INTEGER, 1);
        return attempt === 4 ? (r === undefined ? { next: 0 } : undefined) : r && r.attempts === attempt ? { next: await s.push.nextDue('inst') } : undefined;
      }, `try ${attempt} recorded`);
      if (attempt < 4) {
        waits.push(row.next! - now);
        // Not due before its wait is over.
        w.wake();
        await new Promise((r) => setTimeout(r, 100));
        expect(hook.received).toHaveLength(attempt);
        now = row.next!;
      }
    }
    // 1 s, 2 s, 3 s (capped), each jittered to three quarters by random() = 0.5.
    expect(waits).toEqual([750, 1500, 2250]);
    await w.stop();
    expect(counted).toEqual([
      ['push_deliveries_total', { result: 'retried' }],
      ['push_deliveries_total', { result: 'retried' }],
      ['push_deliveries_total', { result: 'retried' }],
      ['push_dead_letters_total', { reason: 'attempts' }],
    ]);
  });
});

function textOf(r: { json: Record<string, unknown> }): string {
  const update = r.json.statusUpdate as { status: { message?: { parts: Array<{ text?: string }> } } };
  return update.status.message?.parts[0]?.text ?? '';
}
