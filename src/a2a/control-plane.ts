// The operations of A2A v1.0's standard bindings over the task service the pty-ws binding uses:
// one task world, reached by principal rather than by connection (docs/a2a.md). Transport-free:
// routes/a2a-jsonrpc.ts and routes/a2a-rest.ts only decode requests and encode answers.
import { coversSession, type Principal } from '../auth/principal.ts';
import { BindingError } from '../protocol/errors.ts';
import type { Session } from '../hub/types.ts';
import { uuidv7 } from '../core/ids.ts';
import type { Task } from '../protocol/a2a.ts';
import type { FleetTaskQuery, TaskPage, TaskStore } from '../ports/task-store.ts';
import { decodePageToken, encodePageToken } from '../tasks/page-token.ts';
import type { SessionTasks } from '../tasks/session-tasks.ts';
import type { Run } from '../tasks/task-run.ts';
import { taskView } from '../tasks/task-objects.ts';
import { planMessage } from '../tasks/task-plan.ts';
import type { TaskService } from '../tasks/task-service.ts';
import { contextOf, type ContextDeps } from './contexts.ts';
import { PushConfigs, type PushConfigBase, type PushConfigPage } from './push-configs.ts';
import type { PushConfigAnswer } from './push-requests.ts';
import { GetTaskRequest, invalidParams, ListTasksRequest, parseParams, requireScope, SendMessageRequest, TaskIdRequest, taskNotFound } from './requests.ts';
import { TaskEventStream, type StreamResponse } from './task-events.ts';

export interface ControlPlaneDeps extends ContextDeps {
  taskStore: TaskStore;
  tasks: TaskService;
  /** Push-notification configs (docs/a2a.md): their store and webhook checks; tasks are found here. */
  push: PushConfigBase;
}

export interface ListTasksResponse {
  tasks: Task[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

const DEFAULT_PAGE_SIZE = 50;

/** What the standard bindings' routes call: an instance's own agent, or the fleet agent (src/a2a/fleet-plane.ts). */
export type A2aOperations = Pick<
  A2aControlPlane,
  'sendMessage' | 'streamMessage' | 'getTask' | 'listTasks' | 'cancelTask' | 'subscribe' | 'createPushConfig' | 'getPushConfig' | 'listPushConfigs' | 'deletePushConfig' | 'extendedAgentCard'
>;

export class A2aControlPlane {
  /** The four push-notification config operations, over this instance's tasks. */
  readonly push: PushConfigs;

  constructor(private readonly deps: ControlPlaneDeps) {
    this.push = new PushConfigs({ ...deps.push, visibleTask: (p, taskId) => this.contextOfTask(p, taskId) });
  }

  /** SendMessage: the task once it is terminal, or as it is at once with `returnImmediately`. */
  async sendMessage(p: Principal, params: unknown): Promise<{ task: Task }> {
    const req = parseParams(SendMessageRequest, params);
    const { run, tasks } = await this.submit(p, req);
    if (req.configuration?.returnImmediately !== true) await tasks.settled(run);
    return { task: taskView(run.task, req.configuration?.historyLength) };
  }

  /** SendStreamingMessage: the task, then its updates until it is terminal. */
  async streamMessage(p: Principal, params: unknown): Promise<AsyncIterable<StreamResponse>> {
    const req = parseParams(SendMessageRequest, params);
    const events = this.openStream(p);
    try {
      await this.submit(p, req, events);
    } catch (e) {
      events.close();
      throw e;
    }
    return events;
  }

  async getTask(p: Principal, params: unknown): Promise<Task> {
    requireScope(p, 'pty:observe', 'read tasks');
    const { id, historyLength } = parseParams(GetTaskRequest, params);
    const contextId = await this.contextOfTask(p, id);
    await this.deps.tasks.flushed(contextId);
    const task = await this.deps.taskStore.getTask(contextId, id, { historyLength, includeArtifacts: true });
    if (!task) throw taskNotFound(id);
    return task;
  }

  /** ListTasks across the instance, limited to the sessions the principal may see (docs/a2a.md, scopes). */
  async listTasks(p: Principal, params: unknown): Promise<ListTasksResponse> {
    const q = listTasksQuery(p, params);
    if (q.contexts?.length === 0) return { tasks: [], nextPageToken: '', pageSize: q.pageSize, totalSize: 0 };
    await (q.contextId !== undefined ? this.deps.tasks.flushed(q.contextId) : this.deps.tasks.flushedAll());
    return listTasksResponse(q, await this.deps.taskStore.listInstanceTasks({ ...q, instanceId: this.deps.config.instanceId }));
  }

  async cancelTask(p: Principal, params: unknown): Promise<Task> {
    requireScope(p, 'pty:control', 'cancel tasks');
    const { id } = parseParams(TaskIdRequest, params);
    return (await this.tasksOf(await this.contextOfTask(p, id))).cancel(id);
  }

  /** SubscribeToTask: the task as it is now, then its updates until it is terminal. */
  async subscribe(p: Principal, params: unknown): Promise<AsyncIterable<StreamResponse>> {
    requireScope(p, 'pty:observe', 'subscribe to tasks');
    const { id } = parseParams(TaskIdRequest, params);
    const events = this.openStream(p);
    try {
      const tasks = await this.tasksOf(await this.contextOfTask(p, id));
      const task = await tasks.watch(id, events.follower);
      // After the watch: a stream its credential ended meanwhile unwatches at once.
      events.whenEnded(() => tasks.unwatch(events.follower));
      events.begin(task);
    } catch (e) {
      events.close();
      throw e;
    }
    return events;
  }

  createPushConfig(p: Principal, params: unknown): Promise<PushConfigAnswer> {
    return this.push.create(p, params);
  }

  getPushConfig(p: Principal, params: unknown): Promise<PushConfigAnswer> {
    return this.push.get(p, params);
  }

  listPushConfigs(p: Principal, params: unknown): Promise<PushConfigPage> {
    return this.push.list(p, params);
  }

  deletePushConfig(p: Principal, params: unknown): Promise<Record<string, never>> {
    return this.push.delete(p, params);
  }

  /**
   * The card does not declare an extended card, so A2A v1.0 asks for UnsupportedOperationError here;
   * ExtendedAgentCardNotConfigured is for an agent that declares one and has none (docs/a2a.md).
   */
  extendedAgentCard(): never {
    throw new BindingError('UNSUPPORTED_OPERATION', 'this agent publishes no extended AgentCard (capabilities.extendedAgentCard is false)');
  }

  // ------------------------------------------------------------------ helpers

  /**
   * A stream that ends with the credential that opened it, like a pty-ws attachment: revoked
   * (docs/sharing.md) or expired (docs/authentication.md, "Expiry mid-connection"), it ends with UNAUTHENTICATED.
   * Held from before the operation's first await, so a revocation meanwhile is not missed.
   */
  private openStream(p: Principal): TaskEventStream {
    const events = new TaskEventStream(uuidv7(this.deps.clock.now()));
    events.whenEnded(this.deps.hub.endWithCredential(p, events));
    return events;
  }

  private async submit(p: Principal, req: SendMessageRequest, events?: TaskEventStream): Promise<{ run: Run; tasks: SessionTasks }> {
    requireScope(p, 'pty:control', 'send messages');
    const pushConfig = req.configuration?.taskPushNotificationConfig;
    const push = pushConfig === undefined ? undefined : await this.push.forMessage(p, pushConfig, req.message.taskId);
    const { message } = req;
    // The parts are checked before a session is started for them.
    planMessage(message.parts, false);
    const contextId = message.contextId ?? (message.taskId !== undefined ? await this.contextOfTask(p, message.taskId) : undefined);
    const { session, created } = await contextOf(this.deps, p, message, contextId);
    const tasks = this.deps.tasks.forSession(session);
    try {
      const run = await tasks.submit({ ...message, contextId: session.id }, { params: () => undefined, sender: { client_id: `a2a:${p.id}`, label: `${p.id} (A2A)` }, follower: events?.follower, accepted: events ? (task) => events.begin(task) : undefined, push });
      // After the submit, which made the stream a follower: one already over (its credential ended meanwhile) unwatches at once.
      events?.whenEnded(() => tasks.unwatch(events.follower));
      return { run, tasks };
    } catch (e) {
      if (events) tasks.unwatch(events.follower);
      // A session started for a message that was then refused is not left running.
      if (created) await this.deps.hub.kill(session.id).catch(() => false);
      throw asParamsError(e);
    }
  }

  /** The session of a task this principal may see; anything else is not found (it learns nothing). */
  private async contextOfTask(p: Principal, taskId: string): Promise<string> {
    const contextId = await this.deps.taskStore.taskContext(this.deps.config.instanceId, taskId);
    if (contextId === undefined || !coversSession(p, contextId)) throw taskNotFound(taskId);
    return contextId;
  }

  private async tasksOf(contextId: string): Promise<SessionTasks> {
    const session: Session | undefined = await this.deps.hub.session(contextId);
    if (!session) throw new BindingError('INTERNAL', `the session ${contextId} of a stored task could not be loaded`);
    return this.deps.tasks.forSession(session);
  }
}

/** A ListTasks request as a store query: the principal's sessions only (none at all: `contexts` is empty). */
export function listTasksQuery(p: Principal, params: unknown): FleetTaskQuery {
  requireScope(p, 'pty:observe', 'list tasks');
  const req = parseParams(ListTasksRequest, params);
  return {
    pageSize: req.pageSize ?? DEFAULT_PAGE_SIZE,
    after: req.pageToken ? pageCursor(req.pageToken) : undefined,
    contextId: req.contextId,
    contexts: p.sessions ? [...p.sessions] : undefined,
    state: req.status,
    // Stored timestamps are toISOString()'s: the same form compares as the same instant.
    statusTimestampAfter: req.statusTimestampAfter === undefined ? undefined : new Date(req.statusTimestampAfter).toISOString(),
    historyLength: req.historyLength,
    includeArtifacts: req.includeArtifacts ?? false,
  };
}

export function listTasksResponse(q: FleetTaskQuery, page: TaskPage): ListTasksResponse {
  return { tasks: page.tasks, nextPageToken: page.next ? encodePageToken(page.next) : '', pageSize: q.pageSize, totalSize: page.total };
}

/**
 * The task runner's INVALID_REQUEST is about the message (an empty command, a task still queued),
 * which on JSON-RPC is the params' fault (-32602), not the envelope's (-32600).
 */
function asParamsError(e: unknown): unknown {
  if (!(e instanceof BindingError) || e.code !== 'INVALID_REQUEST' || e.a2a !== undefined) return e;
  return invalidParams(e.message, e.metadata);
}

export function pageCursor(token: string) {
  try {
    return decodePageToken(token);
  } catch {
    throw invalidParams('pageToken is not one this server issued: pass nextPageToken from a previous ListTasks answer');
  }
}
