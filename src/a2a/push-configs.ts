// The four push-notification config operations of A2A v1.0, and the config a SendMessage carries
// (docs/a2a.md, "Push notifications"). A config belongs to one task and to the principal that set
// it: only that principal reads, lists or deletes it. They need pty:control (DECISIONS §17). The
// webhook is checked against the policy when it is set, and again before every delivery.
import * as v from 'valibot';
import type { Principal } from '../auth/principal.ts';
import { BindingError } from '../protocol/errors.ts';
import { base64urlEncode, base64urlToText, uuidv7 } from '../core/ids.ts';
import type { Clock } from '../ports/clock.ts';
import type { PushConfigRecord, PushStore } from '../ports/push-store.ts';
import { WebhookRefused, type WebhookSender } from './push-sender.ts';
import { ListPushConfigsParams, PushConfigIdParams, PushConfigParams, type PushConfigAnswer } from './push-requests.ts';
import { invalidParams, parseParams, requireScope } from './requests.ts';

const DEFAULT_PAGE_SIZE = 100;

/** What storing and checking configs needs. */
export interface PushConfigBase {
  store: PushStore;
  sender: WebhookSender;
  clock: Clock;
  /** Configs one principal may set on one task. */
  maxConfigsPerTask: number;
}

export interface PushConfigDeps extends PushConfigBase {
  /** Throws TaskNotFoundError unless the principal may see the task. */
  visibleTask(p: Principal, taskId: string): Promise<unknown>;
}

export interface PushConfigPage {
  configs: PushConfigAnswer[];
  nextPageToken: string;
}

/** A config checked and ready to store once its task exists (SendMessage `configuration`). */
export type NewPushConfig = Omit<PushConfigRecord, 'taskId'>;

export class PushConfigs {
  constructor(private readonly deps: PushConfigDeps) {}

  async create(p: Principal, params: unknown): Promise<PushConfigAnswer> {
    const req = parse(p, params, 'configure push notifications');
    if (!req.taskId) throw invalidParams('taskId is required: the task to notify about');
    await this.deps.visibleTask(p, req.taskId);
    const config = await prepare(this.deps, p, req);
    await roomFor(this.deps, p, req.taskId, config.configId);
    return answer(await this.deps.store.saveConfig({ ...config, taskId: req.taskId }));
  }

  async get(p: Principal, params: unknown): Promise<PushConfigAnswer> {
    requireScope(p, 'pty:control', 'read push-notification configs');
    const { taskId, id } = parseParams(PushConfigIdParams, params);
    await this.deps.visibleTask(p, taskId);
    const rec = await this.deps.store.config(taskId, p.id, id);
    if (!rec) throw new BindingError('TASK_NOT_FOUND', `push-notification config ${id} not found for task ${taskId}`, { metadata: { taskId, id } });
    return answer(rec);
  }

  async list(p: Principal, params: unknown): Promise<PushConfigPage> {
    requireScope(p, 'pty:control', 'list push-notification configs');
    const { taskId, pageSize, pageToken } = parseParams(ListPushConfigsParams, params);
    await this.deps.visibleTask(p, taskId);
    const page = await this.deps.store.configs(taskId, p.id, { pageSize: pageSize || DEFAULT_PAGE_SIZE, afterKey: pageToken ? afterKey(pageToken) : undefined });
    return { configs: page.configs.map(answer), nextPageToken: page.next === null ? '' : base64urlEncode(new TextEncoder().encode(page.next)) };
  }

  /** Deletes the config and what it has not been sent yet; a config that is not there is fine (it is gone either way). */
  async delete(p: Principal, params: unknown): Promise<Record<string, never>> {
    requireScope(p, 'pty:control', 'delete push-notification configs');
    const { taskId, id } = parseParams(PushConfigIdParams, params);
    await this.deps.visibleTask(p, taskId);
    await this.deps.store.deleteConfig(taskId, p.id, id);
    return {};
  }

  forMessage(p: Principal, raw: unknown, continuing?: string): Promise<NewPushConfig> {
    return messagePushConfig(this.deps, p, raw, continuing);
  }
}

/**
 * A SendMessage's `configuration.taskPushNotificationConfig`, checked now (its webhook included)
 * and stored with the task the message creates (or continues: `continuing`), so it hears that
 * task's state from this message on.
 */
export async function messagePushConfig(deps: PushConfigBase, p: Principal, raw: unknown, continuing?: string): Promise<NewPushConfig> {
  const config = await prepare(deps, p, parse(p, raw, 'ask for push notifications', 'configuration.taskPushNotificationConfig'));
  if (continuing !== undefined) await roomFor(deps, p, continuing, config.configId);
  return config;
}

function parse(p: Principal, params: unknown, what: string, where?: string): PushConfigParams {
  requireScope(p, 'pty:control', what);
  return parseParams(PushConfigParams, params, where);
}

async function prepare(deps: PushConfigBase, p: Principal, req: PushConfigParams): Promise<NewPushConfig> {
  try {
    await deps.sender.check(req.url);
  } catch (e) {
    if (e instanceof WebhookRefused) throw invalidParams(`this webhook is refused: ${e.message}`, { url: req.url.slice(0, 256) });
    throw e;
  }
  const now = deps.clock.now();
  return {
    key: uuidv7(now),
    principalId: p.id,
    configId: req.id || uuidv7(now),
    url: req.url,
    token: req.token || null,
    authScheme: req.authentication?.scheme ?? null,
    authCredentials: req.authentication?.credentials || null,
    createdAt: new Date(now).toISOString(),
  };
}

/** RATE_LIMITED when the config would be one too many of this principal on the task (one replacing its own id is not). */
async function roomFor({ store, maxConfigsPerTask: max }: PushConfigBase, p: Principal, taskId: string, configId: string): Promise<void> {
  if ((await store.config(taskId, p.id, configId)) !== undefined || (await store.countConfigs(taskId, p.id)) < max) return;
  throw new BindingError('RATE_LIMITED', `this principal already has ${max} push-notification configs on task ${taskId}: delete one first`);
}

function answer(rec: PushConfigRecord): PushConfigAnswer {
  const out: PushConfigAnswer = { id: rec.configId, taskId: rec.taskId, url: rec.url };
  if (rec.token !== null) out.token = rec.token;
  if (rec.authScheme !== null) out.authentication = rec.authCredentials === null ? { scheme: rec.authScheme } : { scheme: rec.authScheme, credentials: rec.authCredentials };
  return out;
}

function afterKey(token: string): string {
  const key = base64urlToText(token);
  if (!key || !v.is(v.pipe(v.string(), v.regex(/^[0-9a-f-]{36}$/)), key)) throw invalidParams('pageToken is not one this server issued: pass nextPageToken from a previous answer');
  return key;
}
