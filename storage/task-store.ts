// A2A tasks, their history and artifacts behind the `TaskStore` port. Writes go through the
// store's single writer; reads query the database directly.
import { and, asc, count, desc, eq, gt, inArray, sql, type SQL } from 'drizzle-orm';
import { UNFINISHED_STATES, type Artifact, type Message, type Task, type TaskState } from '../src/protocol/a2a.ts';
import type { FleetTaskPage, FleetTaskQuery, InstanceTaskQuery, TaskCursor, TaskOwner, TaskPage, TaskReadOptions, TaskStore, TaskWrite } from '../src/ports/task-store.ts';
import { instances, sessions, taskArtifacts, taskMessages, tasks } from './schema.ts';
import type { BuiltQuery, StoreDatabase } from './db.ts';
import { pushFanOut } from './push-store.ts';

export class LibsqlTaskStore implements TaskStore {
  constructor(
    private readonly db: StoreDatabase,
    /** The store's writer: runs the queries as one write transaction, in order with every other write. */
    private readonly write: (queries: BuiltQuery[]) => Promise<Array<{ rowsAffected: number }>>,
    /** Told after a write that queued push notifications (docs/a2a.md, "Push notifications"). */
    private readonly pushQueued: () => void = () => undefined,
  ) {}

  async saveTask(write: TaskWrite): Promise<void> {
    const { task, messages = [], artifacts = [] } = write;
    const { history: _history, artifacts: _artifacts, ...row } = task;
    const at = task.status.timestamp;
    const set = { state: task.status.state, statusTimestamp: at, task: row as Record<string, unknown>, updatedAt: at };
    const queries: BuiltQuery[] = [
      this.db
        .insert(tasks)
        .values({ id: task.id, contextId: task.contextId, createdAt: at, ...set })
        .onConflictDoUpdate({ target: tasks.id, set }),
    ];
    if (messages.length > 0) {
      const rows = messages.map(({ position, message }) => ({
        taskId: task.id,
        position,
        messageId: message.messageId,
        message: message as unknown as Record<string, unknown>,
        createdAt: at,
      }));
      queries.push(this.db.insert(taskMessages).values(rows).onConflictDoNothing());
    }
    if (artifacts.length > 0) {
      const rows = artifacts.map(({ position, artifact }) => ({
        taskId: task.id,
        artifactId: artifact.artifactId,
        position,
        artifact: artifact as unknown as Record<string, unknown>,
        createdAt: at,
      }));
      queries.push(this.db.insert(taskArtifacts).values(rows).onConflictDoUpdate({ target: [taskArtifacts.taskId, taskArtifacts.artifactId], set: { artifact: sql`excluded.artifact` } }));
    }
    // In the same transaction: a notification is queued exactly when the change it announces is stored.
    const own = queries.length;
    const results = await this.write([...queries, ...pushFanOut(this.db, write)]);
    if (results.slice(own).some((r) => r.rowsAffected > 0)) this.pushQueued();
  }

  async getTask(contextId: string, taskId: string, opts: TaskReadOptions): Promise<Task | undefined> {
    const rows = await this.db
      .select({ task: tasks.task })
      .from(tasks)
      .where(and(eq(tasks.id, taskId), eq(tasks.contextId, contextId)));
    if (rows.length === 0) return undefined;
    return (await this.complete(rows.map((r) => r.task as unknown as Task), opts))[0];
  }

  async listTasks(contextId: string, opts: TaskReadOptions & { pageSize: number; after?: TaskCursor; state?: TaskState }): Promise<TaskPage> {
    return this.page(and(eq(tasks.contextId, contextId), opts.state ? eq(tasks.state, opts.state) : undefined), opts);
  }

  async listInstanceTasks(q: InstanceTaskQuery): Promise<TaskPage> {
    const instanceSessions = this.db.select({ id: sessions.id }).from(sessions).where(eq(sessions.instanceId, q.instanceId));
    return this.page(taskFilter(inArray(tasks.contextId, instanceSessions), q), q);
  }

  async listFleetTasks(q: FleetTaskQuery): Promise<FleetTaskPage> {
    // The sessions of registered instances only, as the fleet GET /sessions lists them.
    const registered = this.db.select({ id: sessions.id }).from(sessions).innerJoin(instances, eq(instances.instanceId, sessions.instanceId));
    const page = await this.page(taskFilter(inArray(tasks.contextId, registered), q), q);
    const contexts = [...new Set(page.tasks.map((t) => t.contextId))];
    const rows = contexts.length === 0 ? [] : await this.db.select({ id: sessions.id, instanceId: sessions.instanceId }).from(sessions).where(inArray(sessions.id, contexts));
    return { ...page, owners: new Map(rows.map((r) => [r.id, r.instanceId])) };
  }

  async fleetTaskOwner(taskId: string): Promise<TaskOwner | undefined> {
    const rows = await this.db
      .select({ contextId: tasks.contextId, instanceId: sessions.instanceId })
      .from(tasks)
      .innerJoin(sessions, eq(sessions.id, tasks.contextId))
      .innerJoin(instances, eq(instances.instanceId, sessions.instanceId))
      .where(eq(tasks.id, taskId));
    return rows[0];
  }

  async taskContext(instanceId: string, taskId: string): Promise<string | undefined> {
    const rows = await this.db
      .select({ contextId: tasks.contextId })
      .from(tasks)
      .innerJoin(sessions, eq(sessions.id, tasks.contextId))
      .where(and(eq(tasks.id, taskId), eq(sessions.instanceId, instanceId)));
    return rows[0]?.contextId;
  }

  /** One page of the tasks matching `filter`, newest status first (ties by id, descending). */
  private async page(filter: SQL | undefined, opts: TaskReadOptions & { pageSize: number; after?: TaskCursor }): Promise<TaskPage> {
    const where: SQL | undefined = opts.after ? and(filter, sql`(${tasks.statusTimestamp}, ${tasks.id}) < (${opts.after.statusTimestamp}, ${opts.after.id})`) : filter;
    const rows = await this.db
      .select({ task: tasks.task, statusTimestamp: tasks.statusTimestamp, id: tasks.id })
      .from(tasks)
      .where(where)
      .orderBy(desc(tasks.statusTimestamp), desc(tasks.id))
      .limit(opts.pageSize + 1);
    const [total] = await this.db.select({ n: count() }).from(tasks).where(filter);
    const page = rows.slice(0, opts.pageSize);
    const last = page.at(-1);
    return {
      tasks: await this.complete(page.map((r) => r.task as unknown as Task), opts),
      total: total?.n ?? 0,
      next: rows.length > opts.pageSize && last ? { statusTimestamp: last.statusTimestamp, id: last.id } : null,
    };
  }

  async unfinishedTasks(instanceId: string): Promise<Array<{ task: Task; historySize: number }>> {
    const rows = await this.db
      .select({
        task: tasks.task,
        historySize: sql<number>`(select count(*) from ${taskMessages} where ${taskMessages.taskId} = ${tasks.id})`,
      })
      .from(tasks)
      .innerJoin(sessions, eq(sessions.id, tasks.contextId))
      .where(and(eq(sessions.instanceId, instanceId), inArray(tasks.state, [...UNFINISHED_STATES])));
    return rows.map((r) => ({ task: r.task as unknown as Task, historySize: Number(r.historySize) }));
  }

  /** Adds the history and artifacts asked for to task rows, keeping their order. */
  private async complete(list: Task[], opts: TaskReadOptions): Promise<Task[]> {
    if (list.length === 0) return list;
    const ids = list.map((t) => t.id);
    const history = opts.historyLength === 0 ? null : await this.history(ids, opts.historyLength);
    const artifacts = opts.includeArtifacts ? await this.artifacts(ids) : null;
    return list.map((t) => {
      const out: Task = { ...t };
      const a = artifacts?.get(t.id);
      if (a) out.artifacts = a;
      if (history) out.history = history.get(t.id) ?? [];
      return out;
    });
  }

  /** Each task's newest `limit` messages (all when undefined), oldest first. */
  private async history(ids: string[], limit: number | undefined): Promise<Map<string, Message[]>> {
    const newest = limit ?? -1;
    const rows = await this.db.all<{ task_id: string; message: string }>(sql`
      select task_id, message from (
        select task_id, position, message, row_number() over (partition by task_id order by position desc) as rn
        from ${taskMessages} where ${inArray(taskMessages.taskId, ids)}
      ) where ${newest} < 0 or rn <= ${newest}
      order by task_id, position`);
    return groupBy(rows, (r) => r.task_id, (r) => JSON.parse(r.message) as Message);
  }

  private async artifacts(ids: string[]): Promise<Map<string, Artifact[]>> {
    const rows = await this.db
      .select({ taskId: taskArtifacts.taskId, artifact: taskArtifacts.artifact })
      .from(taskArtifacts)
      .where(inArray(taskArtifacts.taskId, ids))
      .orderBy(asc(taskArtifacts.taskId), asc(taskArtifacts.position));
    return groupBy(rows, (r) => r.taskId, (r) => r.artifact as unknown as Artifact);
  }
}

/** A ListTasks query's filters, within the sessions `scope` selects. */
function taskFilter(scope: SQL, q: Omit<FleetTaskQuery, 'pageSize'>): SQL | undefined {
  return and(
    scope,
    q.contextId !== undefined ? eq(tasks.contextId, q.contextId) : undefined,
    q.contexts !== undefined ? inArray(tasks.contextId, [...q.contexts]) : undefined,
    q.state ? eq(tasks.state, q.state) : undefined,
    q.statusTimestampAfter !== undefined ? gt(tasks.statusTimestamp, q.statusTimestampAfter) : undefined,
  );
}

function groupBy<R, T>(rows: R[], key: (r: R) => string, value: (r: R) => T): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const k = key(r);
    const list = out.get(k);
    if (list) list.push(value(r));
    else out.set(k, [value(r)]);
  }
  return out;
}
