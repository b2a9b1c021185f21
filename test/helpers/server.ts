// Starts the real router (in this process) with a real PTY host child and a real libSQL file in a temp dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.ts';
import { startServer, type RunningServer, type StartOptions } from '../../src/adapter/node/server.ts';
import type { Logger } from '../../src/ports.ts';

export interface TestServer extends RunningServer {
  dir: string;
  config: Config;
  logs: string[];
  wsOrigin: string;
  attachUrl(sessionId: string): string;
  /** Closes the server and removes its dir (kept with `keepDir`, e.g. for a restart on it). */
  stop(opts?: { keepDir?: boolean }): Promise<void>;
}

export interface TestServerOptions extends Omit<StartOptions, 'logger'> {
  /** Start on this state dir (a restart) instead of a new temp dir. */
  dir?: string;
  /** Adjusts settings that have no env var or flag. */
  configure?: (config: Config) => void;
}

export async function startTestServer(env: Record<string, string> = {}, flags: Record<string, string> = {}, opts: TestServerOptions = {}): Promise<TestServer> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'pty-ws-test-'));
  const config = loadConfig(
    { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', ...env },
    { port: '0', 'state-dir': dir, ...flags },
  );
  opts.configure?.(config);
  const logs: string[] = [];
  const logger: Logger = {
    log: (level, msg, fields) => void logs.push(JSON.stringify({ level, msg, ...fields })),
    child() {
      return logger;
    },
  };
  const server = await startServer(config, { createDefaultSession: opts.dir === undefined, logger, decoratePtyHost: opts.decoratePtyHost });
  const wsOrigin = server.origin.replace(/^http/, 'ws');
  return {
    ...server,
    dir,
    config,
    logs,
    wsOrigin,
    attachUrl: (id) => `${wsOrigin}/agents/${config.instanceId}/sessions/${id}/attach`,
    async stop({ keepDir = false } = {}) {
      await server.close();
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
