// The instance registry rows behind the `InstanceRegistryStore` port (docs/deployment.md, "A
// fleet"). Writes go through the store's single writer like every other write; reads are plain
// selects, so a fleet listing costs two queries however many instances share the database.
import { and, asc, eq } from 'drizzle-orm';
import type { InstanceRecord, InstanceRegistryStore } from '../src/ports/instance-registry.ts';
import type { SessionRecord } from '../src/ports/store.ts';
import { instances, sessionRecordColumns, sessions } from './schema.ts';
import type { BuiltQuery, StoreDatabase } from './db.ts';


export class LibsqlInstanceRegistry implements InstanceRegistryStore {
  constructor(
    private readonly db: StoreDatabase,
    private readonly write: (queries: BuiltQuery[]) => Promise<Array<{ rowsAffected: number }>>,
  ) {}

  async register(rec: InstanceRecord): Promise<void> {
    const t = instances;
    const { instanceId: _id, ...rest } = rec;
    // The lease (instance-leases.ts) is held by now: no other router writes this row meanwhile.
    await this.write([this.db.insert(t).values(rec).onConflictDoUpdate({ target: t.instanceId, set: rest })]);
  }

  async restore(rec: InstanceRecord): Promise<void> {
    await this.write([this.db.insert(instances).values(rec).onConflictDoNothing({ target: instances.instanceId })]);
  }

  async heartbeat(instanceId: string, owner: string, at: number): Promise<boolean> {
    const [r] = await this.write([this.db.update(instances).set({ lastSeenAt: at }).where(this.#own(instanceId, owner))]);
    return (r?.rowsAffected ?? 0) > 0;
  }

  async stopped(instanceId: string, owner: string, at: number): Promise<void> {
    await this.write([this.db.update(instances).set({ stoppedAt: at }).where(this.#own(instanceId, owner))]);
  }

  #own(instanceId: string, owner: string) {
    return and(eq(instances.instanceId, instanceId), eq(instances.owner, owner));
  }

  list(): Promise<InstanceRecord[]> {
    return this.db.select().from(instances).orderBy(asc(instances.instanceId));
  }

  registeredSessions(): Promise<SessionRecord[]> {
    return this.db
      .select(sessionRecordColumns)
      .from(sessions)
      .innerJoin(instances, eq(instances.instanceId, sessions.instanceId))
      .orderBy(asc(sessions.createdAt), asc(sessions.id));
  }

  async get(instanceId: string): Promise<InstanceRecord | undefined> {
    return (await this.db.select().from(instances).where(eq(instances.instanceId, instanceId)))[0];
  }

  async sessionOwner(sessionId: string): Promise<InstanceRecord | undefined> {
    const rows = await this.db.select({ instance: instances }).from(instances).innerJoin(sessions, eq(sessions.instanceId, instances.instanceId)).where(eq(sessions.id, sessionId));
    return rows[0]?.instance;
  }
}
