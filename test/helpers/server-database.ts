// A test file's real router and a client of its libSQL file, both closed after each test.
import { join } from 'node:path';
import { createClient, type Client } from '@libsql/client';
import { afterEach } from 'vitest';
import { startTestServer, type TestServer } from './server.ts';

export interface ServerAndDatabase {
  /** Starts the server (a restart when `opts.dir` is given) and, the first time, opens its database file. */
  start(...args: Parameters<typeof startTestServer>): Promise<{ server: TestServer; db: Client }>;
  /** Stops the server and keeps its state directory, for a restart on it. */
  stopKeepingDir(): Promise<string>;
}

/** Registers the cleanup; call at the top of a test file. */
export function serverAndDatabase(): ServerAndDatabase {
  let server: TestServer | undefined;
  let db: Client | undefined;
  afterEach(async () => {
    db?.close();
    db = undefined;
    await server?.stop();
    server = undefined;
  });
  return {
    async start(...args) {
      server = await startTestServer(...args);
      // A busy timeout: a test that writes beside the server waits for its commits.
      db ??= createClient({ url: `file:${join(server.dir, 'pty-ws.db')}`, timeout: 5000 });
      return { server, db };
    },
    async stopKeepingDir() {
      const dir = server!.dir;
      await server!.stop({ keepDir: true });
      server = undefined;
      return dir;
    },
  };
}
