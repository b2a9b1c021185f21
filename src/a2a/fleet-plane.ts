// The fleet agent (docs/deployment.md, "The fleet agent"): A2A operations over the tasks of every
// instance registered in the shared database, served by any instance. Reads (ListTasks, GetTask)
// answer from the database; an operation on a live terminal of another instance is not run here:
// `messageOwner` and `taskOwner` name the instance it must be forwarded to (routes/a2a-forward.ts),
// after the same scope and visibility checks the owner makes, so a caller learns nothing it could
// not learn at the owner. Transport-free, like control-plane.ts.
import { coversSession, type Principal } from '../auth/principal.ts';
import type { Config } from '../core/config.ts';
import type { Task } from '../protocol/a2a.ts';
import type { InstanceRecord, InstanceRegistryStore } from '../ports/instance-registry.ts';
import type { TaskOwner, TaskStore } from '../ports/task-store.ts';
import type { TaskService } from '../tasks/task-service.ts';
import { listTasksQuery, listTasksResponse, type A2aControlPlane, type A2aOperations, type ListTasksResponse } from './control-plane.ts';
import { PushConfigs, type PushConfigBase } from './push-configs.ts';
import { GetTaskRequest, invalidParams, parseParams, requireScope, SendMessageRequest, TaskIdRequest, taskNotFound } from './requests.ts';

/** The key of a task's `metadata` that names the instance owning its session (fleet answers only). */
export const OWNER_METADATA_KEY = 'instance_id';

export interface FleetPlaneDeps {
  config: Config;
  /** This instance's own agent: what runs here. */
  local: A2aControlPlane;
  taskStore: TaskStore;
  registry: InstanceRegistryStore;
  tasks: TaskService;
  /** Push configs are rows of the shared database: set here, they are sent by the instance owning the task. */
  push: PushConfigBase;
}

export class FleetControlPlane implements A2aOperations {
  private readonly push: PushConfigs;

  constructor(private readonly deps: FleetPlaneDeps) {
    this.push = new PushConfigs({ ...deps.push, visibleTask: (p, taskId) => this.visibleTask(p, taskId) });
  }

  // What runs on the serving instance: a message without a context (a new session here), or any
  // operation `messageOwner`/`taskOwner` found to be this instance's.
  sendMessage: A2aOperations['sendMessage'] = (p, params) => this.deps.local.sendMessage(p, params);
  streamMessage: A2aOperations['streamMessage'] = (p, params) => this.deps.local.streamMessage(p, params);
  cancelTask: A2aOperations['cancelTask'] = (p, params) => this.deps.local.cancelTask(p, params);
  subscribe: A2aOperations['subscribe'] = (p, params) => this.deps.local.subscribe(p, params);
  createPushConfig: A2aOperations['createPushConfig'] = (p, params) => this.push.create(p, params);
  getPushConfig: A2aOperations['getPushConfig'] = (p, params) => this.push.get(p, params);
  listPushConfigs: A2aOperations['listPushConfigs'] = (p, params) => this.push.list(p, params);
  deletePushConfig: A2aOperations['deletePushConfig'] = (p, params) => this.push.delete(p, params);
  extendedAgentCard: A2aOperations['extendedAgentCard'] = () => this.deps.local.extendedAgentCard();

  /** ListTasks across every registered instance, limited to the sessions the principal may see (as GET /sessions). */
  async listTasks(p: Principal, params: unknown): Promise<ListTasksResponse> {
    const q = listTasksQuery(p, params);
    if (q.contexts?.length === 0) return { tasks: [], nextPageToken: '', pageSize: q.pageSize, totalSize: 0 };
    // This instance's task writes still queued are committed first; other instances' are read as committed.
    await this.deps.tasks.flushedAll();
    const page = await this.deps.taskStore.listFleetTasks(q);
    return listTasksResponse(q, { ...page, tasks: page.tasks.map((t) => withOwner(t, page.owners.get(t.contextId))) });
  }

  /** GetTask of any registered instance's task, from the shared database. */
  async getTask(p: Principal, params: unknown): Promise<Task> {
    requireScope(p, 'pty:observe', 'read tasks');
    const { id, historyLength } = parseParams(GetTaskRequest, params);
    const owner = await this.visibleTask(p, id);
    if (owner.instanceId === this.deps.config.instanceId) return withOwner(await this.deps.local.getTask(p, params), owner.instanceId);
    const task = await this.deps.taskStore.getTask(owner.contextId, id, { historyLength, includeArtifacts: true });
    if (!task) throw taskNotFound(id);
    return withOwner(task, owner.instanceId);
  }

  /**
   * Where a SendMessage/SendStreamingMessage runs: undefined for here (no context: a new session
   * here; or a context of this instance), else the instance owning its context (or its task's).
   */
  async messageOwner(p: Principal, params: unknown): Promise<InstanceRecord | undefined> {
    requireScope(p, 'pty:control', 'send messages');
    const { message } = parseParams(SendMessageRequest, params);
    if (message.contextId === undefined) return message.taskId === undefined ? undefined : this.foreign(await this.visibleTask(p, message.taskId), message.taskId);
    const owner = coversSession(p, message.contextId) ? await this.deps.registry.sessionOwner(message.contextId) : undefined;
    // One answer for unknown and not-covered contexts, as at the instance (src/a2a/contexts.ts).
    if (!owner) throw invalidParams(`contextId ${JSON.stringify(message.contextId)} is not a session of this fleet this bearer may use: omit contextId to start a new one`, { contextId: message.contextId });
    return owner.instanceId === this.deps.config.instanceId ? undefined : owner;
  }

  /** Where CancelTask (`pty:control`) or SubscribeToTask (`pty:observe`) runs: undefined for here, else the task's instance. */
  async taskOwner(p: Principal, params: unknown, op: 'cancel' | 'subscribe'): Promise<InstanceRecord | undefined> {
    requireScope(p, op === 'cancel' ? 'pty:control' : 'pty:observe', op === 'cancel' ? 'cancel tasks' : 'subscribe to tasks');
    const { id } = parseParams(TaskIdRequest, params);
    return this.foreign(await this.visibleTask(p, id), id);
  }

  /** The task's session and instance, where the principal may see it; else not found (it learns nothing). */
  private async visibleTask(p: Principal, taskId: string): Promise<TaskOwner> {
    const owner = await this.deps.taskStore.fleetTaskOwner(taskId);
    if (!owner || !coversSession(p, owner.contextId)) throw taskNotFound(taskId);
    return owner;
  }

  private async foreign(owner: TaskOwner, taskId: string): Promise<InstanceRecord | undefined> {
    if (owner.instanceId === this.deps.config.instanceId) return undefined;
    const rec = await this.deps.registry.get(owner.instanceId);
    // Deregistered between the two reads: as if the task were not listed.
    if (!rec) throw taskNotFound(taskId);
    return rec;
  }
}

function withOwner(task: Task, instanceId: string | undefined): Task {
  return instanceId === undefined ? task : { ...task, metadata: { ...task.metadata, [OWNER_METADATA_KEY]: instanceId } };
}
