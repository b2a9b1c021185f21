// drizzle-kit: `npm run db:generate` writes a migration for schema changes. The credentials are
// only used by commands that talk to a database (studio, push), never by `generate`.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'turso',
  schema: './storage/schema.ts',
  out: './storage/migrations',
  dbCredentials: {
    url: process.env.PTY_WS_DATABASE_URL ?? 'file:.pty-ws/pty-ws.db',
    authToken: process.env.PTY_WS_DATABASE_AUTH_TOKEN,
  },
});
