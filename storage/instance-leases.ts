// The instance lease rows behind the `InstanceLeaseStore` port (docs/operations.md, "One router
// per instance"). Each write is one statement through the store's single writer: SQLite (a file
// or a libSQL server) runs it atomically, so of two routers taking the same free lease at once
// exactly one gets it.
import { and, eq, sql } from 'drizzle-orm';
import type { InstanceLease, InstanceLeaseStore, LeaseClaim } from '../src/ports/instance-lease.ts';
import { instanceLeases } from './schema.ts';
import type { BuiltQuery, StoreDatabase } from './db.ts';

export class LibsqlInstanceLeases implements InstanceLeaseStore {
  constructor(
    private readonly db: StoreDatabase,
    private readonly write: (queries: BuiltQuery[]) => Promise<Array<{ rowsAffected: number }>>,
  ) {}

  async acquire(claim: LeaseClaim): Promise<InstanceLease> {
    const t = instanceLeases;
    const row = { instanceId: claim.instanceId, owner: claim.owner, stateKey: claim.stateKey, holder: claim.holder, expiresAt: claim.expiresAt };
    // Taken when free, expired, already ours, or held from the same state directory: its lock,
    // which the claimant holds now, proves that holder gone.
    await this.write([
      this.db
        .insert(t)
        .values(row)
        .onConflictDoUpdate({
          target: t.instanceId,
          set: { owner: row.owner, stateKey: row.stateKey, holder: row.holder, expiresAt: row.expiresAt },
          setWhere: sql`${t.expiresAt} <= ${claim.now} or ${t.owner} = ${claim.owner} or ${t.stateKey} = ${claim.stateKey}`,
        }),
    ]);
    const [held] = await this.db.select().from(t).where(eq(t.instanceId, claim.instanceId));
    if (!held) throw new Error(`instance lease ${claim.instanceId}: the row is gone right after it was written`);
    return { owner: held.owner, holder: held.holder, expiresAt: held.expiresAt };
  }

  async renew(instanceId: string, owner: string, expiresAt: number): Promise<boolean> {
    const t = instanceLeases;
    const [r] = await this.write([this.db.update(t).set({ expiresAt }).where(and(eq(t.instanceId, instanceId), eq(t.owner, owner)))]);
    return (r?.rowsAffected ?? 0) > 0;
  }

  async release(instanceId: string, owner: string): Promise<void> {
    const t = instanceLeases;
    await this.write([this.db.delete(t).where(and(eq(t.instanceId, instanceId), eq(t.owner, owner)))]);
  }
}
