// Push-notification configs and the outbox of their notifications behind the `PushStore` port
// (docs/a2a.md, "Push notifications"). Writes go through the store's single writer; reads query the
// database. The outbox rows are queued by the task store, in the transaction of the task change
// they announce (`pushFanOut`).
import { and, asc, count, eq, gt, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type { Artifact, Task } from '../src/protocol/a2a.ts';
import type { PushConfigRecord, PushDelivery, PushStore } from '../src/ports/push-store.ts';
import type { TaskWrite } from '../src/ports/task-store.ts';
import { pushConfigs, pushDeliveries, sessions, taskArtifacts, tasks } from './schema.ts';
import type { BuiltQuery, StoreDatabase } from './db.ts';

type Write = (queries: BuiltQuery[]) => Promise<Array<{ rowsAffected: number }>>;

export class LibsqlPushStore implements PushStore {
  constructor(
    private readonly db: StoreDatabase,
    private readonly write: Write,
  ) {}

  async saveConfig(rec: PushConfigRecord): Promise<PushConfigRecord> {
    await this.write([upsertConfig(this.db, rec)]);
    return (await this.config(rec.taskId, rec.principalId, rec.configId)) ?? rec;
  }

  async config(taskId: string, principalId: string, configId: string): Promise<PushConfigRecord | undefined> {
    const [row] = await this.db.select().from(pushConfigs).where(this.#own(taskId, principalId, configId));
    return row;
  }

  async configs(taskId: string, principalId: string, page: { pageSize: number; afterKey?: string }): Promise<{ configs: PushConfigRecord[]; next: string | null }> {
    const c = pushConfigs;
    const rows = await this.db
      .select()
      .from(c)
      .where(and(eq(c.taskId, taskId), eq(c.principalId, principalId), page.afterKey === undefined ? undefined : gt(c.key, page.afterKey)))
      .orderBy(asc(c.key))
      .limit(page.pageSize + 1);
    const configs = rows.slice(0, page.pageSize);
    return { configs, next: rows.length > page.pageSize ? configs.at(-1)!.key : null };
  }

  async countConfigs(taskId: string, principalId: string): Promise<number> {
    const [row] = await this.db
      .select({ n: count() })
      .from(pushConfigs)
      .where(and(eq(pushConfigs.taskId, taskId), eq(pushConfigs.principalId, principalId)));
    return row?.n ?? 0;
  }

  async deleteConfig(taskId: string, principalId: string, configId: string): Promise<boolean> {
    const keys = this.db.select({ key: pushConfigs.key }).from(pushConfigs).where(this.#own(taskId, principalId, configId));
    const [, removed] = await this.write([this.db.delete(pushDeliveries).where(inArray(pushDeliveries.configKey, keys)), this.db.delete(pushConfigs).where(this.#own(taskId, principalId, configId))]);
    return (removed?.rowsAffected ?? 0) > 0;
  }

  #own(taskId: string, principalId: string, configId: string) {
    return and(eq(pushConfigs.taskId, taskId), eq(pushConfigs.principalId, principalId), eq(pushConfigs.configId, configId));
  }

  async due(instanceId: string, now: number, limit: number): Promise<PushDelivery[]> {
    const d = pushDeliveries;
    const c = pushConfigs;
    return this.db
      .select({
        id: d.id,
        configKey: d.configKey,
        taskId: d.taskId,
        principalId: c.principalId,
        kind: d.kind,
        event: d.event,
        chunk: d.chunk,
        attempts: d.attempts,
        url: c.url,
        token: c.token,
        authScheme: c.authScheme,
        authCredentials: c.authCredentials,
      })
      .from(d)
      .innerJoin(c, eq(c.key, d.configKey))
      .where(and(eq(d.instanceId, instanceId), headOfItsConfig(), lte(d.nextAttemptAt, now), free(now)))
      .orderBy(asc(d.nextAttemptAt), asc(d.id))
      .limit(limit);
  }

  async nextDue(instanceId: string): Promise<number | null> {
    const d = pushDeliveries;
    // A leased row is due again when its lease runs out (its holder may be gone).
    const [row] = await this.db
      .select({ at: sql<number | null>`min(max(${d.nextAttemptAt}, coalesce(${d.leaseUntil}, 0)))` })
      .from(d)
      .where(and(eq(d.instanceId, instanceId), headOfItsConfig()));
    return row?.at ?? null;
  }

  async claim(id: number, owner: string, leaseUntil: number, now: number): Promise<boolean> {
    const [r] = await this.write([this.db.update(pushDeliveries).set({ leaseOwner: owner, leaseUntil }).where(and(eq(pushDeliveries.id, id), free(now)))]);
    return (r?.rowsAffected ?? 0) > 0;
  }

  async progressed(id: number, owner: string, chunk: number, leaseUntil: number): Promise<void> {
    await this.write([this.db.update(pushDeliveries).set({ chunk, leaseUntil }).where(held(id, owner))]);
  }

  async done(id: number, owner: string): Promise<void> {
    await this.write([this.db.delete(pushDeliveries).where(held(id, owner))]);
  }

  async failed(id: number, owner: string, attempts: number, nextAttemptAt: number, error: string): Promise<void> {
    await this.write([this.db.update(pushDeliveries).set({ attempts, nextAttemptAt, lastError: error.slice(0, 1000), leaseOwner: null, leaseUntil: null }).where(held(id, owner))]);
  }

  async trim(instanceId: string, keep: number): Promise<Array<{ configKey: string; taskId: string; dropped: number }>> {
    const d = pushDeliveries;
    const over = await this.db
      .select({ configKey: d.configKey, taskId: d.taskId, n: count() })
      .from(d)
      .where(eq(d.instanceId, instanceId))
      .groupBy(d.configKey, d.taskId)
      .having(gt(count(), keep));
    const out: Array<{ configKey: string; taskId: string; dropped: number }> = [];
    for (const { configKey, taskId } of over) {
      // The oldest (it may be on its way) and the newest keep - 1 stay: the latest states matter most.
      const kept = this.db.select({ id: d.id }).from(d).where(eq(d.configKey, configKey)).orderBy(sql`${d.id} desc`).limit(keep - 1);
      const oldest = this.db.select({ id: sql`min(${d.id})` }).from(d).where(eq(d.configKey, configKey));
      const [r] = await this.write([this.db.delete(d).where(and(eq(d.configKey, configKey), sql`${d.id} not in ${kept}`, sql`${d.id} not in ${oldest}`))]);
      const dropped = r?.rowsAffected ?? 0;
      if (dropped > 0) out.push({ configKey, taskId, dropped });
    }
    return out;
  }

  async artifact(taskId: string, artifactId: string): Promise<{ contextId: string; artifact: Artifact } | undefined> {
    const [row] = await this.db
      .select({ contextId: tasks.contextId, artifact: taskArtifacts.artifact })
      .from(taskArtifacts)
      .innerJoin(tasks, eq(tasks.id, taskArtifacts.taskId))
      .where(and(eq(taskArtifacts.taskId, taskId), eq(taskArtifacts.artifactId, artifactId)));
    return row && { contextId: row.contextId, artifact: row.artifact as unknown as Artifact };
  }
}

/**
 * What a task write queues for the task's push configs, run in its transaction after the task's
 * own rows: its new artifacts, then its state, one row each per config (none when it has none).
 * Each row goes to the instance owning the task's session.
 */
export function pushFanOut(db: StoreDatabase, { task, artifacts = [], pushConfigs: added = [] }: TaskWrite): BuiltQuery[] {
  const at = Date.parse(task.status.timestamp);
  const queries: BuiltQuery[] = added.map((rec) => upsertConfig(db, rec));
  const queue = (kind: 'status' | 'artifact', event: string) =>
    db.insert(pushDeliveries).select(
      db
        .select({
          id: sql`null`.as('id'),
          configKey: pushConfigs.key,
          taskId: pushConfigs.taskId,
          instanceId: sessions.instanceId,
          kind: sql`${kind}`.as('kind'),
          event: sql`${event}`.as('event'),
          chunk: sql`0`.as('chunk'),
          attempts: sql`0`.as('attempts'),
          nextAttemptAt: sql`${at}`.as('next_attempt_at'),
          leaseOwner: sql`null`.as('lease_owner'),
          leaseUntil: sql`null`.as('lease_until'),
          lastError: sql`null`.as('last_error'),
          createdAt: sql`${at}`.as('created_at'),
        })
        .from(pushConfigs)
        .innerJoin(tasks, eq(tasks.id, pushConfigs.taskId))
        .innerJoin(sessions, eq(sessions.id, tasks.contextId))
        .where(eq(pushConfigs.taskId, task.id))
        .orderBy(asc(pushConfigs.key)),
    );
  for (const { artifact } of artifacts) queries.push(queue('artifact', artifact.artifactId));
  queries.push(queue('status', statusEvent(task)));
  return queries;
}

/** A principal's config of a task with an id it already used replaces that one (its undelivered notifications go to the new webhook). */
function upsertConfig(db: StoreDatabase, rec: PushConfigRecord): BuiltQuery {
  const { key: _key, taskId: _task, principalId: _principal, configId: _config, ...set } = rec;
  const c = pushConfigs;
  return db.insert(c).values(rec).onConflictDoUpdate({ target: [c.taskId, c.principalId, c.configId], set });
}

/** The StreamResponse of a task's state, as its webhooks get it. */
function statusEvent(task: Task): string {
  return JSON.stringify({ statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status } });
}

/** The row is the oldest queued for its config: a config's notifications go one at a time, in order. */
function headOfItsConfig() {
  const h = pushDeliveries;
  return sql`${h.id} = (select min(h2.id) from ${pushDeliveries} h2 where h2.config_key = ${h.configKey})`;
}

function free(now: number) {
  return or(isNull(pushDeliveries.leaseUntil), lte(pushDeliveries.leaseUntil, now));
}

function held(id: number, owner: string) {
  return and(eq(pushDeliveries.id, id), eq(pushDeliveries.leaseOwner, owner));
}
