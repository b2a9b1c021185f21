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

export async function migrateDatabase(db: LibSQLDatabase): Promise<void> {
  await migrate(db, { migrationsFolder: migrationsFolder() });
}
