// Starts the real router (in this process) with a real PTY host child and a real libSQL file in a temp dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/adapter/node/server.ts';
import type { Logger } from '../../src/ports.ts';

export interface TestServer extends RunningServer {
  dir: string;
  /** Every log line, child-logger fields included, as JSON. */
  logs: string[];
  wsOrigin: string;
  attachUrl(sessionId: string): string;
  /** POST /agents/{instance}/sessions as the given bearer; throws unless it answers 201. */
  createSession(token: string, body?: Record<string, unknown>): Promise<{ session_id: string; attach_url: string }>;
  stop(): Promise<void>;
}

/** `overrides` replace fields of the loaded Config (for settings that have no env var). */
export async function startTestServer(env: Record<string, string> = {}, flags: Record<string, string> = {}, overrides: Partial<Config> = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-test-'));
  // Test files open many connections of one principal in quick succession; the limits have their own tests.
  const config: Config = {
    ...loadConfig({ PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL: '1000', ...env }, { port: '0', 'state-dir': dir, ...flags }),
    upgradeAttemptsPerSecond: 1000,
    ...overrides,
  };
  const logs: string[] = [];
  const loggerWith = (base: Record<string, unknown>): Logger => ({
    log: (level, msg, fields) => void logs.push(JSON.stringify({ level, msg, ...base, ...fields })),
    child: (fields) => loggerWith({ ...base, ...fields }),
  });
  const server = await startServer(config, { createDefaultSession: true, logger: loggerWith({}) }).catch((e: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  });
  const wsOrigin = server.origin.replace(/^http/, 'ws');
  return {
    ...server,
    dir,
    logs,
    wsOrigin,
    attachUrl: (id) => `${wsOrigin}/agents/${config.instanceId}/sessions/${id}/attach`,
    async createSession(token, body = {}) {
      const res = await fetch(`${server.origin}/agents/${config.instanceId}/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`creating a session: HTTP ${res.status} ${await res.text()}`);
      return (await res.json()) as { session_id: string; attach_url: string };
    },
    async stop() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
