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
  /** POST /agents/{instance}/sessions with the dev token (or the given one); throws unless 201. */
  createSession(body?: Record<string, unknown>, token?: string | null): Promise<{ session_id: string; attach_url: string }>;
  stop(): Promise<void>;
}

/**
 * Test files open many connections of one principal in quick succession, so both per-principal
 * attach limits are raised unless a test sets them (the limits have their own tests); `overrides`
 * replace Config fields that have no env var.
 */
export async function startTestServer(env: Record<string, string> = {}, flags: Record<string, string> = {}, overrides: Partial<Config> = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-test-'));
  const config: Config = {
    ...loadConfig(
      { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL: '1000', ...env },
      { port: '0', 'state-dir': dir, ...flags },
    ),
    upgradeAttemptsPerSecond: 1000,
    ...overrides,
  };
  const logs: string[] = [];
  const collecting = (base: Record<string, unknown>): Logger => ({
    log: (level, msg, fields) => void logs.push(JSON.stringify({ level, msg, ...base, ...fields })),
    child: (fields) => collecting({ ...base, ...fields }),
  });
  const logger = collecting({});
  const server = await startServer(config, { createDefaultSession: true, logger }).catch((e: unknown) => {
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
    async createSession(body = {}, token = server.devToken) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (token) headers.authorization = `Bearer ${token}`;
      const res = await fetch(`${server.origin}/agents/${config.instanceId}/sessions`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`create session: HTTP ${res.status} ${await res.text()}`);
      return (await res.json()) as { session_id: string; attach_url: string };
    },
    async stop() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

