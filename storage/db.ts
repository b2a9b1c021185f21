// The database handle and query shape the store and the task store share: their contract, kept
// apart from either implementation so neither imports the other for a type.
import type { Client } from '@libsql/client';
import type { LibSQLDatabase } from 'drizzle-orm/libsql';

export type StoreDatabase = LibSQLDatabase & { $client: Client };

/** A drizzle query builder: built here, run through the client so the batch is a write transaction. */
export type BuiltQuery = { toSQL(): { sql: string; params: unknown[] } };
