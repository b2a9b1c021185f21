// The Node adapter: serves the portable router (src/router/router.ts) with node:http and `ws`, over the PTY
// host process, a libSQL file (its log commits in a worker thread) and a worker thread for the
// terminal emulators.
import { nodeJournalPort } from './journal-file.ts';
import { nodeDiskFacts } from './full-disk.ts';
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { serve, upgradeWebSocket, type ServerType } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import { errorCode, setUpAuth } from '../../auth/setup.ts';
import { ConfigError, type Config } from '../../core/config.ts';
import { jsonLogger } from '../../services/logger.ts';
import { negotiate } from '../../protocol/subprotocol.ts';
import { HOST_SUBPROTOCOL } from '../../protocol/host-info.ts';
import type { Logger } from '../../ports/logger.ts';
import type { PtyHost } from '../../ports/pty-host.ts';
import type { WebhookTransport } from '../../ports/webhook-transport.ts';
import { reloadThen, startRouter, type ScreenService, type ServedRouter } from '../../router/router.ts';
import { databaseFilePath, readSecretFiles, securePrivateState } from '../../services/private-files.ts';
import { sessionConfinement } from '../../core/session-confinement.ts';
import { PrometheusMetrics } from '../prometheus.ts';
import { nodeWebhookTransport } from './webhook-transport.ts';
import { nodeStateLockPort } from './state-lock-port.ts';
import { withUpgradeRefusalBodies } from './upgrade-refusal.ts';
import { supervisedPtyHostLink } from '../../host-link/supervised.ts';
import { nodePtyHostRuntime } from './pty-host-process.ts';
import { nodeFileFacts } from './file-facts.ts';
import { nodeLogCommitterFor } from './worker-log-committer.ts';
import { fileLogReaderFor } from './file-log-reader.ts';
import type { LogCommitter, LogDatabase } from '../../../storage/log-committer.ts';
import { checkWalFile } from '../../../storage/wal-check.ts';
import { WorkerScreens } from './worker-screens.ts';
import { wrapNodeSocket } from './ws-connection.ts';
import { hopTraceFromEnv } from './hop-trace.ts';
import { guardPendingConnections, type RequestSeen } from './handshake-guard.ts';
import { bundledWebAssets } from './web-assets.ts';
import { nodeDevTokenFile } from './dev-token-file.ts';
import { nodeSessionFiles } from './session-files.ts';
import { clientCertificateOf } from './client-certificate.ts';
import { recordServerAddress } from './server-address.ts';

export interface RunningServer extends ServedRouter {
  /** The PTY host this router started, if it started one. */
  /** The pid of the PTY host the router is connected to (null while it is unreachable). */
  ptyHostPid(): number | null;
}

export interface StartOptions {
  createDefaultSession?: boolean;
  logger?: Logger;
  /** Wraps the PtyHost port the hub talks to (a test makes the router slower than its PTYs with it). */
  decoratePtyHost?: (host: PtyHost) => PtyHost;
  /** After the server closed because it can no longer serve (its instance lease was lost). */
  onFatal?: (error: Error) => void;
  /** Wraps the replay log's committer (a test makes the database slower than the PTYs with it). */
  decorateLogCommitter?: (committer: LogCommitter) => LogCommitter;
  /** Wraps the terminal emulators' service (a test stops their worker with it). */
  decorateScreens?: (screens: ScreenService) => ScreenService;
  /** Wraps where push notifications go (a test makes a name resolve differently over time with it). */
  decorateWebhooks?: (transport: WebhookTransport) => WebhookTransport;
}

export async function startServer(settings: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const config = readSecretFiles(settings, nodeFileFacts, (file) => readFileSync(file, 'utf8'));
  const logger = opts.logger ?? jsonLogger(config.logLevel, { instance: config.instanceId }, { pretty: process.stderr.isTTY, write: (l) => void process.stderr.write(l) });
  const { auth, devToken, devTokenKept, reloadTokens } = await setUpAuth(config, { now: Date.now }, logger, (file) => readFileSync(file, 'utf8'), nodeDevTokenFile(config.stateDir));
  const tls = loadTls(config);

  const databaseFile = databaseFilePath(config.databaseUrl);
  securePrivateState({ stateDir: resolve(config.stateDir), databaseFile: databaseFile === undefined ? undefined : resolve(databaseFile) }, nodeFileFacts, logger);
  if (databaseFile !== undefined) checkWalFile(config.databaseUrl, resolve(databaseFile), (file) => (existsSync(file) ? readFileSync(file) : undefined));
  const metrics = new PrometheusMetrics({ processMetrics: true });
  const keepalive = { pingIntervalMs: config.pingIntervalMs, pongTimeoutMs: config.pongTimeoutMs };
  const hopTrace = hopTraceFromEnv(process.env, 'router-ws');
  const router = await startRouter(config, {
    logger,
    clock: { now: Date.now },
    auth,
    metrics,
    stateLock: nodeStateLockPort,
    journal: nodeJournalPort,
    trace: hopTrace,
    webhooks: opts.decorateWebhooks?.(nodeWebhookTransport()) ?? nodeWebhookTransport(),
    fatal: (e) => void close().finally(() => opts.onFatal?.(e)),
    logCommitterFor: decorated(nodeLogCommitterFor(logger), opts.decorateLogCommitter),
    logReaderFor: fileLogReaderFor,
    diskFacts: nodeDiskFacts,
    connectPtyHost: () =>
      supervisedPtyHostLink({ runtime: nodePtyHostRuntime, socketPath: resolve(config.ptySocket), logger, settings: { logLevel: config.logLevel, confinement: sessionConfinement(config, (p) => resolve(p)) }, stateDir: resolve(config.stateDir) }, opts.decoratePtyHost),
    startScreens: () => {
      const screens = new WorkerScreens(logger);
      return opts.decorateScreens?.(screens) ?? screens;
    },
    app: {
      webAssets: bundledWebAssets(logger),
      sessionFiles: nodeSessionFiles,
      upgradeWebSocket,
      wrapSocket: (ws, binary, onStale) => wrapNodeSocket(ws, binary, keepalive, onStale, metrics, hopTrace),
      ...(tls?.requestCert ? { clientCertificate: clientCertificateOf } : {}),
      remoteAddress: (c) => (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket?.remoteAddress,
      localPort: (c) => (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket?.localPort,
    },
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: config.maxFrameBytes,
    // ws would echo the first offered entry, which may be a bearer.<token>: echo only the PTY token,
    // or for a PTY host's link (routes/hosts.ts checked it before the upgrade) the host's.
    handleProtocols: (offered) => {
      try {
        return negotiate([...offered].join(','), false).selected ?? false;
      } catch {
        return offered.has(HOST_SUBPROTOCOL) ? HOST_SUBPROTOCOL : false;
      }
    },
  });

  // A request's headers, then all of it, must arrive within seconds: a silent or half-sent
  // handshake is dropped then, not after node's 60 s + 30 s (docs/security.md, attack 8).
  const timeouts = { headersTimeout: config.headersTimeoutMs, requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: 1000 };
  const refusalBodies = withUpgradeRefusalBodies(router.app.fetch);
  let requestSeen: RequestSeen = () => undefined;
  const fetch = (req: Request, env: { incoming: { socket: object } }) => {
    requestSeen(env.incoming.socket);
    return refusalBodies(req, env);
  };
  const base = { fetch, port: config.port, hostname: config.host, websocket: { server: wss } };
  const start = () => {
    const s = tls ? serve({ ...base, createServer: createHttpsServer, serverOptions: { ...tls, ...timeouts, handshakeTimeout: config.headersTimeoutMs } }) : serve({ ...base, serverOptions: timeouts });
    requestSeen = guardPendingConnections(s, { total: config.maxPendingConnections, perAddress: config.maxPendingConnectionsPerAddress });
    return s;
  };
  const server = await listen(start).catch(async (e: unknown) => {
    await router.stop();
    throw e;
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `${tls ? 'https' : 'http'}://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  const defaultSession = opts.createDefaultSession ? await router.createDefaultSession() : null;

  // For `pty-ws token`: the page URL of the server running on this state directory.
  const forgetAddress = recordServerAddress(config.stateDir, config.publicUrl ?? origin);
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      forgetAddress();
      server.close();
      await router.stop(() => {
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
    })());
  // Only a listening instance is worth sending clients to (docs/deployment.md, "A fleet").
  await router.announce(origin).catch(async (e: unknown) => {
    await close();
    throw e;
  });

  return { port, origin, devToken, devTokenKept, defaultSession, hub: router.hub, ptyHostPid: () => router.ptyHost.pid(), reloadTokens: reloadThen(reloadTokens, router), close };
}

interface TlsOptions {
  cert: Buffer;
  key: Buffer;
  /** mTLS: the CA client certificates are verified against; a client may still present none (then a bearer decides). */
  ca?: Buffer;
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
}

/** The certificate and key, read and checked as a pair now, so a bad file stops the start with its name. */
function loadTls(config: Config): TlsOptions | null {
  if (config.tlsClientCa !== undefined && (config.tlsCert === undefined || config.tlsKey === undefined)) {
    throw new ConfigError(['PTY_WS_TLS_CLIENT_CA needs PTY_WS_TLS_CERT and PTY_WS_TLS_KEY: client certificates are checked where this server terminates TLS itself']);
  }
  if (config.tlsCert === undefined || config.tlsKey === undefined) return null;
  const read = (setting: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new ConfigError([`${setting} ${file}: cannot read it (${errorCode(e)})`]);
    }
  };
  const pair = { cert: read('PTY_WS_TLS_CERT', config.tlsCert), key: read('PTY_WS_TLS_KEY', config.tlsKey) };
  try {
    createSecureContext(pair);
  } catch (e) {
    throw new ConfigError([`PTY_WS_TLS_CERT ${config.tlsCert} / PTY_WS_TLS_KEY ${config.tlsKey}: not a usable certificate and key pair (${e instanceof Error ? e.message : String(e)})`]);
  }
  if (config.tlsClientCa === undefined) return pair;
  const ca = read('PTY_WS_TLS_CLIENT_CA', config.tlsClientCa);
  try {
    createSecureContext({ ...pair, ca });
  } catch (e) {
    throw new ConfigError([`PTY_WS_TLS_CLIENT_CA ${config.tlsClientCa}: not a usable CA certificate (${e instanceof Error ? e.message : String(e)})`]);
  }
  // Verified in the handshake, judged per request: no certificate is fine (a bearer then decides),
  // a certificate that fails verification is refused by the authenticator with the reason.
  return { ...pair, ca, requestCert: true, rejectUnauthorized: false };
}

function listen(start: () => ServerType): Promise<ServerType> {
  return new Promise((resolvePromise, reject) => {
    const server = start();
    server.once('listening', () => resolvePromise(server));
    server.once('error', reject);
  });
}

function decorated(committerFor: (db: LogDatabase) => LogCommitter | undefined, decorate: ((c: LogCommitter) => LogCommitter) | undefined) {
  if (!decorate) return committerFor;
  return (db: LogDatabase) => {
    const committer = committerFor(db);
    return committer && decorate(committer);
  };
}
