// Brings a database up to the schema in storage/migrations/. Safe to run on every start:
// drizzle records applied migrations in `__drizzle_migrations` and skips them.
import type { LibSQLDatabase } from 'drizzle-orm/libsql';
import { migrate } from 'drizzle-orm/libsql/migrator';

/**
 * The migrations ship next to this module. Resolved from import.meta.url rather than the
 * working directory so the server can start from anywhere; `.pathname` instead of
 * node:url's fileURLToPath keeps storage/ free of Node-only imports.
 */
export function migrationsFolder(): string {
  return decodeURIComponent(new URL('./migrations', import.meta.url).pathname);
}

/** Tries when routers started at once on one database raced (see migrateDatabase). */
const ATTEMPTS = 5;

/**
 * drizzle reads the newest applied migration, then applies the newer ones in one transaction. Two
 * routers starting at once on one database (several instances on one libSQL server) both read
 * "none applied" and the slower one's transaction fails on what the faster one created (`table
 * session_log already exists`), rolled back whole. So a failure is retried: the next read sees
 * what the winner applied and there is nothing left to do. A failure that is not such a race
 * (a read-only or locked database) is thrown at once.
 */
export async function migrateDatabase(db: LibSQLDatabase): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await migrate(db, { migrationsFolder: migrationsFolder() });
      return;
    } catch (e) {
      if (attempt === ATTEMPTS || !lostRace(e)) throw e;
      await new Promise((r) => setTimeout(r, 20 * attempt + Math.random() * 50));
    }
  }
}

/** What the slower of two racing migrations fails with: an object the faster one created. */
function lostRace(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 8; c = c.cause, depth++) {
    if (/already exists|duplicate column name|UNIQUE constraint failed/i.test(c.message)) return true;
  }
  return false;
}
