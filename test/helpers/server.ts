// Starts the real router (in this process) with a real PTY host child and a real libSQL file in a temp dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/core/config.ts';
import { startServer, type RunningServer, type StartOptions } from '../../src/adapter/node/server.ts';
import { jsonLogger } from '../../src/services/logger.ts';
import { isAlive } from '../../pty/backends/process-tree.ts';
import { endOrphans, expectNoneLeft, killMultiplexers, processesMentioning } from './leftovers.ts';

export interface TestServer extends RunningServer {
  dir: string;
  config: Config;
  /** Every log line, child-logger fields included, as JSON. */
  logs: string[];
  wsOrigin: string;
  attachUrl(sessionId: string): string;
  /** POST /agents/{instance}/sessions with the dev token (or the given one); throws unless 201. */
  createSession(body?: Record<string, unknown>, token?: string | null): Promise<{ session_id: string; attach_url: string }>;
  /** Closes the server and removes its dir (kept with `keepDir`, e.g. for a restart on it). */
  stop(opts?: { keepDir?: boolean }): Promise<void>;
}

export interface TestServerOptions extends Omit<StartOptions, 'logger' | 'createDefaultSession'> {
  /** Start on this state dir (a restart) instead of a new temp dir; no default session then. */
  dir?: string;
  /** Create (or reuse) the default session as `pty-ws start` does; default: only on a new dir. */
  defaultSession?: boolean;
  /** Config fields that have no env var or flag. */
  overrides?: Partial<Config>;
  /**
   * A replay log kept shorter than pty-ws-v1 §8.2's floor (1000 frames / 24 h), which the env vars
   * refuse: the tests of pruning need one. Set in code only; production refuses it at start.
   */
  belowSpecRetention?: { frames: number; seconds: number };
}

/**
 * Test files open many connections of one principal in quick succession, so both per-principal
 * attach limits are raised unless a test sets them (the limits have their own tests).
 */
export async function startTestServer(env: Record<string, string> = {}, flags: Record<string, string> = {}, opts: TestServerOptions = {}): Promise<TestServer> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'pty-ws-test-'));
  const config: Config = {
    ...loadConfig(
      // per-start: a restart on the same dir prints (and `devToken` holds) a token again; the kept
      // token's own tests (test/security/dev-token.test.ts) set PTY_WS_DEV_TOKEN_POLICY=keep. A native
      // default session ends with its server; the tmux one's tests (test/sessions/default-session.test.ts)
      // set PTY_WS_DEFAULT_SESSION_BACKEND=auto.
      { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL: '1000', PTY_WS_DEV_TOKEN_POLICY: 'per-start', PTY_WS_DEFAULT_SESSION_BACKEND: 'native', ...env },
      { port: '0', 'state-dir': dir, ...flags },
    ),
    upgradeAttemptsPerSecond: 1000,
    ...(opts.belowSpecRetention ? { replayBufferFrames: opts.belowSpecRetention.frames, replayRetentionSeconds: opts.belowSpecRetention.seconds } : {}),
    ...opts.overrides,
  };
  const logs: string[] = [];
  // The server's own JSON lines (errors with their stacks), one string each.
  const logger = jsonLogger('debug', {}, { write: (line) => void logs.push(line.trimEnd()) });
  const server = await startServer(config, { createDefaultSession: opts.defaultSession ?? opts.dir === undefined, logger, decoratePtyHost: opts.decoratePtyHost, decorateLogCommitter: opts.decorateLogCommitter, decorateScreens: opts.decorateScreens, decorateWebhooks: opts.decorateWebhooks }).catch((e: unknown) => {
    if (opts.dir === undefined) rmSync(dir, { recursive: true, force: true });
    throw e;
  });
  const wsOrigin = server.origin.replace(/^http/, 'ws');
  return {
    ...server,
    dir,
    config,
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
    async stop({ keepDir = false } = {}) {
      await server.close();
      if (keepDir) return;
      // Nothing of a server whose directory goes may outlive it; say so when something did (a
      // PTY host the router did not stop), so it can be found, and end it.
      const left = processesMentioning(dir);
      if (left.length > 0) {
        process.stderr.write(`test server ${dir}: left running after stop(): ${JSON.stringify(left)}\n`);
        await endOrphans(dir);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Stops a server whose sessions include tmux/screen ones: those keep the PTY host (and the
 * multiplexers) running on purpose, so both are ended here; then nothing may be left running.
 */
export async function stopWithMultiplexers(server: TestServer): Promise<void> {
  const hostPid = server.ptyHostPid();
  await server.stop({ keepDir: true });
  if (hostPid && isAlive(hostPid)) process.kill(hostPid, 'SIGTERM');
  await killMultiplexers(server.config.ptySocket);
  await expectNoneLeft(server.dir);
  rmSync(server.dir, { recursive: true, force: true });
}
