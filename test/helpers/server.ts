// Starts the real router (in this process) with a real PTY host child and a real libSQL file in a temp dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer, type StartOptions } from '../../src/adapter/node/server.ts';
import type { Logger } from '../../src/ports.ts';

export interface TestServer extends RunningServer {
  dir: string;
  logs: string[];
  wsOrigin: string;
  attachUrl(sessionId: string): string;
  /** POST /agents/{instance}/sessions with the dev token (or the given one); throws unless 201. */
  createSession(body?: Record<string, unknown>, token?: string | null): Promise<{ session_id: string; attach_url: string }>;
  stop(): Promise<void>;
}

/** `flags['state-dir']` starts on an existing state directory (a restart); `authenticator` replaces the dev token. */
export async function startTestServer(env: Record<string, string> = {}, flags: Record<string, string> = {}, opts: { authenticator?: StartOptions['authenticator'] } = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-test-'));
  const config = loadConfig(
    { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', ...env },
    { port: '0', 'state-dir': dir, ...flags },
  );
  const logs: string[] = [];
  const logger: Logger = {
    log: (level, msg, fields) => void logs.push(JSON.stringify({ level, msg, ...fields })),
    child() {
      return logger;
    },
  };
  const server = await startServer(config, { createDefaultSession: true, logger, authenticator: opts.authenticator });
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

