// Share links behind the `ShareStore` port (docs/sharing.md). Writes go through the store's single
// writer, so a share is durable before its token is handed out; reads query the database.
import { and, asc, eq, gt, isNull, type SQL } from 'drizzle-orm';
import type { ShareRecord, ShareStore } from '../src/ports/share-store.ts';
import { shares } from './schema.ts';
import type { BuiltQuery, StoreDatabase } from './db.ts';

export class LibsqlShareStore implements ShareStore {
  constructor(
    private readonly db: StoreDatabase,
    private readonly write: (queries: BuiltQuery[]) => Promise<Array<{ rowsAffected: number }>>,
  ) {}

  async create(rec: ShareRecord): Promise<void> {
    await this.write([this.db.insert(shares).values(rec)]);
  }

  async byTokenHash(tokenSha256: string): Promise<ShareRecord | undefined> {
    const [row] = await this.db.select().from(shares).where(eq(shares.tokenSha256, tokenSha256));
    return row;
  }

  async byId(shareId: string): Promise<ShareRecord | undefined> {
    const [row] = await this.db.select().from(shares).where(eq(shares.id, shareId));
    return row;
  }

  listActive(sessionId: string, now: number): Promise<ShareRecord[]> {
    return this.active(now, eq(shares.sessionId, sessionId));
  }

  listInstanceActive(instanceId: string, now: number, createdBy?: string): Promise<ShareRecord[]> {
    return this.active(now, eq(shares.instanceId, instanceId), createdBy === undefined ? undefined : eq(shares.createdBy, createdBy));
  }

  private active(now: number, ...where: Array<SQL | undefined>): Promise<ShareRecord[]> {
    return this.db
      .select()
      .from(shares)
      .where(and(...where, isNull(shares.revokedAt), gt(shares.expiresAt, new Date(now).toISOString())))
      .orderBy(asc(shares.createdAt), asc(shares.id));
  }

  async revoke(sessionId: string, shareId: string, at: string): Promise<boolean> {
    const [result] = await this.write([
      this.db
        .update(shares)
        .set({ revokedAt: at })
        .where(and(eq(shares.id, shareId), eq(shares.sessionId, sessionId), isNull(shares.revokedAt))),
    ]);
    return (result?.rowsAffected ?? 0) > 0;
  }
}
