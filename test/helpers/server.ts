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
  /** Stops the server and removes its state directory. */
  stop(): Promise<void>;
}

export interface TestServerOptions {
  /** Reuse this state directory (a restart); it is then the caller's to remove. */
  dir?: string;
  authenticator?: StartOptions['authenticator'];
}

export async function startTestServer(env: Record<string, string> = {}, flags: Record<string, string> = {}, opts: TestServerOptions = {}): Promise<TestServer> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'pty-ws-test-'));
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
    async stop() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a session over REST; returns its attach URL. */
export async function createSession(server: TestServer, body: Record<string, unknown> = {}, token = server.devToken): Promise<string> {
  const res = await fetch(`${server.origin}/agents/local/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`session create: HTTP ${res.status}`);
  return ((await res.json()) as { attach_url: string }).attach_url;
}
