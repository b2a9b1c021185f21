// Remote PTY hosts' credentials behind the `HostStore` port (docs/remote-hosts.md). Writes go
// through the store's single writer, so a credential is durable before its token is handed out.
import { and, asc, eq } from 'drizzle-orm';
import type { HostRecord, HostStore } from '../src/ports/host-store.ts';
import { hosts } from './schema.ts';
import type { BuiltQuery, StoreDatabase } from './db.ts';

export class LibsqlHostStore implements HostStore {
  constructor(
    private readonly db: StoreDatabase,
    private readonly write: (queries: BuiltQuery[]) => Promise<Array<{ rowsAffected: number }>>,
  ) {}

  async put(rec: HostRecord): Promise<void> {
    const { instanceId: _i, name: _n, ...replaced } = rec;
    await this.write([this.db.insert(hosts).values(rec).onConflictDoUpdate({ target: [hosts.instanceId, hosts.name], set: replaced })]);
  }

  async byTokenHash(tokenSha256: string): Promise<HostRecord | undefined> {
    const [row] = await this.db.select().from(hosts).where(eq(hosts.tokenSha256, tokenSha256));
    return row;
  }

  list(instanceId: string): Promise<HostRecord[]> {
    return this.db.select().from(hosts).where(eq(hosts.instanceId, instanceId)).orderBy(asc(hosts.name));
  }

  async remove(instanceId: string, name: string): Promise<boolean> {
    const [result] = await this.write([this.db.delete(hosts).where(and(eq(hosts.instanceId, instanceId), eq(hosts.name, name)))]);
    return (result?.rowsAffected ?? 0) > 0;
  }
}
