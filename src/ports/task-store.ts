// A2A tasks as the store keeps them (docs/a2a.md).
import type { PushConfigRecord } from './push-store.ts';
import type { Artifact, Message, Task, TaskState } from '../protocol/a2a.ts';

/** One write of a task: its row, plus what it gained since the last write. */
export interface TaskWrite {
  /** Inserted, or replacing the stored one; its `history` and `artifacts` are not written from here. */
  task: Task;
  /** Messages appended to its history, with their 0-based positions in it. */
  messages?: Array<{ position: number; message: Message }>;
  /** Artifacts added to it, with their 0-based positions among its artifacts. */
  artifacts?: Array<{ position: number; artifact: Artifact }>;
  /**
   * Push configs set by the message that created the task (SendMessage `configuration`): stored
   * with it, so they hear its first state. Every write also queues, for each of the task's push
   * configs, the state it writes and the artifacts it adds (docs/a2a.md, "Push notifications").
   */
  pushConfigs?: PushConfigRecord[];
}

export interface TaskReadOptions {
  /** Keep only the newest this many history messages (undefined = all, 0 = none). */
  historyLength?: number;
  includeArtifacts: boolean;
}

/** Where a ListTasks page starts: after this task in newest-first order. */
export interface TaskCursor {
  statusTimestamp: string;
  id: string;
}

export interface TaskPage {
  tasks: Task[];
  /** Matching tasks in the whole context, not just this page. */
  total: number;
  /** Set when more tasks follow this page. */
  next: TaskCursor | null;
}

export interface TaskStore {
  /** Writes in order with every other write of the store; resolves once committed. */
  saveTask(write: TaskWrite): Promise<void>;
  getTask(contextId: string, taskId: string, opts: TaskReadOptions): Promise<Task | undefined>;
  /** The context's tasks, newest status first (ties by id, descending). */
  listTasks(contextId: string, opts: TaskReadOptions & { pageSize: number; after?: TaskCursor; state?: TaskState }): Promise<TaskPage>;
  /** Tasks of this instance's sessions that are not in a terminal state, with their history sizes. */
  unfinishedTasks(instanceId: string): Promise<Array<{ task: Task; historySize: number }>>;
  /** The session (context) a task of this instance belongs to; task ids are unique per instance. */
  taskContext(instanceId: string, taskId: string): Promise<string | undefined>;
  /** A ListTasks page across the instance's sessions (the standard A2A bindings), ordered like listTasks. */
  listInstanceTasks(query: InstanceTaskQuery): Promise<TaskPage>;
  /** A ListTasks page across the sessions of every registered instance (the fleet agent, docs/deployment.md), ordered like listTasks. */
  listFleetTasks(query: FleetTaskQuery): Promise<FleetTaskPage>;
  /** The session and instance of a task of any registered instance (task ids are the primary key of the shared database's tasks table). */
  fleetTaskOwner(taskId: string): Promise<TaskOwner | undefined>;
}

export interface TaskOwner {
  contextId: string;
  instanceId: string;
}

export interface FleetTaskPage extends TaskPage {
  /** The owning instance of each listed task's session, by session id. */
  owners: ReadonlyMap<string, string>;
}

export interface InstanceTaskQuery extends FleetTaskQuery {
  instanceId: string;
}

export interface FleetTaskQuery extends TaskReadOptions {
  pageSize: number;
  after?: TaskCursor;
  /** Only this session's tasks. */
  contextId?: string;
  /** Only tasks of these sessions (a principal restricted to some sessions); absent = every session. */
  contexts?: readonly string[];
  state?: TaskState;
  /** Only tasks whose status changed strictly after this instant (ISO-8601 UTC, as stored). */
  statusTimestampAfter?: string;
}
