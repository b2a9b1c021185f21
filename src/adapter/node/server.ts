// The Node adapter: wires the portable core to node:http, `ws`, the PTY host process and a libSQL file.
import { mkdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { dirname, resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { serve, upgradeWebSocket, type ServerType } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import { createApp } from '../../../routes/app.ts';
import { openStore } from '../../../storage/open.ts';
import { ConfigError, type Config } from '../../config.ts';
import { SessionHub } from '../../hub/hub.ts';
import { NATIVE_ONLY } from '../../hub/session-host.ts';
import { newSessionRecord } from '../../hub/session-record.ts';
import { negotiate } from '../../protocol/subprotocol.ts';
import type { Logger, SessionRecord } from '../../ports.ts';
import { setUpAuth } from './auth-setup.ts';
import { taskOps } from '../../tasks/ops.ts';
import { TaskService } from '../../tasks/task-service.ts';
import { bundledWebAssets } from './web-assets.ts';
import { jsonLogger } from './logger.ts';
import { ensurePtyHost } from './pty-host-client.ts';
import { PrometheusMetrics } from './prometheus.ts';
import { WorkerScreens } from './worker-screens.ts';
import { wrapNodeSocket } from './ws-connection.ts';

export interface RunningServer {
  port: number;
  /** http://host:port, or https:// when serving TLS */
  origin: string;
  /** The bearer token generated for this run (null when auth is off or tokens come from config). */
  devToken: string | null;
  defaultSession: SessionRecord | null;
  hub: SessionHub;
  /** The PTY host this router started, if it started one. */
  ptyHostPid: number | undefined;
  /** Re-reads PTY_WS_TOKENS_FILE (SIGHUP); open connections keep their principal. False when the old map stays. */
  reloadTokens(): Promise<boolean>;
  close(): Promise<void>;
}

export interface StartOptions {
  createDefaultSession?: boolean;
  logger?: Logger;
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = opts.logger ?? jsonLogger(config.logLevel, { instance: config.instanceId }, { pretty: process.stderr.isTTY });
  const { auth, devToken, reloadTokens } = await setUpAuth(config, { now: Date.now }, logger);
  const tls = loadTls(config);

  mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
  if (config.databaseUrl.startsWith('file:')) mkdirSync(dirname(resolve(config.databaseUrl.slice('file:'.length))), { recursive: true });
  const store = await openStore({ url: config.databaseUrl, authToken: config.databaseAuthToken, logger });
  const ptyHandle = await ensurePtyHost({ socketPath: resolve(config.ptySocket), logger }).catch(async (e: unknown) => {
    await store.close();
    throw e;
  });

  const screens = new WorkerScreens(logger);
  const metrics = new PrometheusMetrics();
  const tasks = new TaskService({ store: store.tasks, clock: { now: Date.now }, logger });
  const hub = new SessionHub({
    config,
    store,
    pty: ptyHandle.host,
    clock: { now: Date.now },
    logger,
    sessionHost: NATIVE_ONLY,
    screens: (cols, rows) => screens.create(cols, rows),
    metrics,
    ops: taskOps(tasks),
    replayFilter: tasks.replayFilter,
    // The task runner follows each terminal from the start: whether a human is mid-line matters later.
    sessionLoaded: (session) => tasks.forSession(session),
  });
  await tasks.start(config.instanceId);
  await hub.start();

  const keepalive = { pingIntervalMs: config.pingIntervalMs, pongTimeoutMs: config.pongTimeoutMs };
  const app = createApp({
    config,
    store,
    hub,
    auth,
    webAssets: bundledWebAssets(logger),
    upgradeWebSocket,
    wrapSocket: (ws, binary, onStale) => wrapNodeSocket(ws, binary, keepalive, onStale, metrics),
    remoteAddress: (c) => (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket?.remoteAddress,
    ready: async () => {
      const problems: string[] = [];
      await store.lastSequence('readyz').catch((e: unknown) => problems.push(`database: ${String(e)}`));
      const t0 = performance.now();
      await ptyHandle.host.list().then(
        () => metrics.observe('pty_host_rtt_seconds', (performance.now() - t0) / 1000),
        (e: unknown) => problems.push(`pty host: ${String(e)}`),
      );
      return problems;
    },
    renderMetrics: async () => metrics.render(await hub.stats()),
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: config.maxFrameBytes,
    // ws would echo the first offered entry, which may be a bearer.<token>: echo only the PTY token.
    handleProtocols: (offered) => {
      try {
        return negotiate([...offered].join(','), false).selected ?? false;
      } catch {
        return false;
      }
    },
  });

  const base = { fetch: app.fetch, port: config.port, hostname: config.host, websocket: { server: wss } };
  const server = await listen(() => (tls ? serve({ ...base, createServer: createHttpsServer, serverOptions: tls }) : serve(base))).catch(async (e: unknown) => {
    await hub.shutdown(ptyHandle.child !== undefined);
    await store.close();
    await ptyHandle.stop();
    throw e;
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `${tls ? 'https' : 'http'}://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  let defaultSession: SessionRecord | null = null;
  if (opts.createDefaultSession) {
    defaultSession = newSessionRecord(
      { instanceId: config.instanceId, caps: NATIVE_ONLY, defaultCols: config.defaultCols, defaultRows: config.defaultRows, createdBy: null, now: Date.now() },
      { label: 'default' },
    );
    await store.createSession(defaultSession);
  }

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      server.close();
      await hub.shutdown(ptyHandle.child !== undefined);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      if ('closeAllConnections' in server) server.closeAllConnections();
      await store.close();
      await ptyHandle.stop();
      await screens.close();
    })());

  return { port, origin, devToken, defaultSession, hub, ptyHostPid: ptyHandle.child?.pid, reloadTokens, close };
}

/** The certificate and key, read and checked as a pair now, so a bad file stops the start with its name. */
function loadTls(config: Config): { cert: Buffer; key: Buffer } | null {
  if (config.tlsCert === undefined || config.tlsKey === undefined) return null;
  const read = (setting: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new ConfigError([`${setting} ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)})`]);
    }
  };
  const pair = { cert: read('PTY_WS_TLS_CERT', config.tlsCert), key: read('PTY_WS_TLS_KEY', config.tlsKey) };
  try {
    createSecureContext(pair);
  } catch (e) {
    throw new ConfigError([`PTY_WS_TLS_CERT ${config.tlsCert} / PTY_WS_TLS_KEY ${config.tlsKey}: not a usable certificate and key pair (${e instanceof Error ? e.message : String(e)})`]);
  }
  return pair;
}

function listen(start: () => ServerType): Promise<ServerType> {
  return new Promise((resolvePromise, reject) => {
    const server = start();
    server.once('listening', () => resolvePromise(server));
    server.once('error', reject);
  });
}
