// The Deno adapter: serves the portable router (src/router/router.ts) with Deno.serve and Hono's Deno
// WebSocket upgrade, over the Node PTY host (reached with Deno.connect) and the libSQL client.
import { ConfigError, type Config } from '../../core/config.ts';
import { errorCode, setUpAuth } from '../../auth/setup.ts';
import { denoJournalPort } from './journal-file.ts';
import { inProcessScreens } from '../../screen/screen.ts';
import { jsonLogger } from '../../services/logger.ts';
import type { Logger } from '../../ports/logger.ts';
import { reloadThen, startRouter, type ServedRouter } from '../../router/router.ts';
import { sessionConfinement } from '../../core/session-confinement.ts';
import { PrometheusMetrics } from '../prometheus.ts';
import { denoWebhookTransport } from './webhook-transport.ts';
import { supervisedPtyHostLink } from '../../host-link/supervised.ts';
import { denoPtyHostRuntime } from './pty-host.ts';
import { denoStateLockPort } from './state-lock-port.ts';
import { checkWalFile } from '../../../storage/wal-check.ts';
import { databaseFilePath, readSecretFiles, securePrivateState } from '../../services/private-files.ts';
import { denoFileFacts } from './file-facts.ts';
import { denoDevTokenFile } from './dev-token-file.ts';
import { absolute, writeAll } from './io.ts';
import { denoKeepalive } from './keepalive.ts';
import { denoUpgradeWebSocket, wrapDenoSocket } from './ws-connection.ts';
import { CLOSE } from '../../protocol/close-codes.ts';

export interface StartOptions {
  createDefaultSession?: boolean;
  /** After the server closed because it can no longer serve (its instance lease was lost). */
  onFatal?: (error: Error) => void;
  logger?: Logger;
}

export async function startServer(settings: Config, opts: StartOptions = {}): Promise<ServedRouter> {
  const config = readSecretFiles(settings, denoFileFacts, (file) => Deno.readTextFileSync(file));
  const logger = opts.logger ?? jsonLogger(config.logLevel, { instance: config.instanceId }, { pretty: Deno.stderr.isTerminal(), write: (l) => writeAll(Deno.stderr, l) });
  const { auth, devToken, devTokenKept, reloadTokens } = await setUpAuth(config, { now: Date.now }, logger, (file) => Deno.readTextFileSync(file), denoDevTokenFile(config.stateDir));
  const tls = loadTls(config);

  const databaseFile = databaseFilePath(config.databaseUrl);
  securePrivateState({ stateDir: absolute(config.stateDir), databaseFile: databaseFile === undefined ? undefined : absolute(databaseFile) }, denoFileFacts, logger);
  if (databaseFile !== undefined) checkWalFile(config.databaseUrl, absolute(databaseFile), (file) => (denoFileFacts.stat(file) ? Deno.readFileSync(file) : undefined));
  const metrics = new PrometheusMetrics({ processMetrics: false });
  const sockets = new Set<WebSocket>();
  const keepalive = denoKeepalive(config);
  if (!keepalive) logger.log('warn', "this Deno's WebSocket has no idle-timer hook: keepalive falls back to Deno's idle timeout (a Ping after half of PTY_WS_PONG_TIMEOUT_MS of silence, close 1001)", { deno: Deno.version.deno });
  const router = await startRouter(config, {
    logger,
    clock: { now: Date.now },
    auth,
    metrics,
    stateLock: denoStateLockPort,
    journal: denoJournalPort,
    webhooks: denoWebhookTransport(),
    fatal: (e) => void close().finally(() => opts.onFatal?.(e)),
    connectPtyHost: () => supervisedPtyHostLink({ runtime: denoPtyHostRuntime, socketPath: absolute(config.ptySocket), logger, settings: { logLevel: config.logLevel, confinement: sessionConfinement(config, absolute) }, stateDir: absolute(config.stateDir) }),
    // In this thread: Deno's Web Workers would need the emulator messages of worker-screens.ts
    // over another worker API, which is not built (see wrangler-notes.md).
    startScreens: () => ({ create: inProcessScreens, close: () => Promise.resolve() }),
    app: {
      upgradeWebSocket: denoUpgradeWebSocket({ maxMessageBytes: config.maxFrameBytes, idleTimeoutSeconds: keepalive?.idleTimeoutSeconds ?? config.pongTimeoutMs / 1000 }),
      wrapSocket: (ws, binary, onStale) => {
        const raw = ws.raw as WebSocket;
        sockets.add(raw);
        const stopKeepalive = keepalive?.start(raw, onStale);
        return {
          ...wrapDenoSocket(raw, binary, metrics),
          dispose: () => {
            stopKeepalive?.();
            sockets.delete(raw);
          },
        };
      },
      remoteAddress: (c) => (c.env as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined)?.remoteAddr?.hostname,
      // Requests arrive only once Deno.serve below has bound the port.
      localPort: () => server.addr.port,
    },
  });

  let closing: Promise<void> | null = null;
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({ hostname: config.host, port: config.port, ...tls, onListen: () => undefined }, (req, info) =>
      closing ? new Response('shutting down', { status: 503, headers: { connection: 'close' } }) : router.app.fetch(req, info),
    );
  } catch (e) {
    await router.stop();
    // Deno checks the pair only when it starts listening.
    if (tls && e instanceof Deno.errors.InvalidData) {
      throw new ConfigError([`PTY_WS_TLS_CERT ${config.tlsCert} / PTY_WS_TLS_KEY ${config.tlsKey}: not a usable certificate and key pair (${e.message})`]);
    }
    throw e;
  }
  const port = server.addr.port;
  const origin = `${tls ? 'https' : 'http'}://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  const defaultSession = opts.createDefaultSession ? await router.createDefaultSession() : null;

  const close = () =>
    (closing ??= (async () => {
      // Deno's shutdown() would close every WebSocket with 1001 at once: new requests get 503
      // while the clients get their goodbyes, and the listener closes after.
      await router.stop(() => {
        // Deno cannot drop a WebSocket without a close frame: whatever is still open gets 1001.
        for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) ws.close(CLOSE.goingAway, 'server shutting down');
      });
      await server.shutdown();
    })());
  await router.announce(origin).catch(async (e: unknown) => {
    await close();
    throw e;
  });

  return { port, origin, devToken, devTokenKept, defaultSession, hub: router.hub, reloadTokens: reloadThen(reloadTokens, router), close };
}

/** The certificate and key as PEM text, read now so a missing file stops the start with its name. */
function loadTls(config: Config): { cert: string; key: string } | null {
  if (config.tlsCert === undefined || config.tlsKey === undefined) return null;
  const read = (setting: string, file: string) => {
    try {
      return Deno.readTextFileSync(file);
    } catch (e) {
      throw new ConfigError([`${setting} ${file}: cannot read it (${errorCode(e)})`]);
    }
  };
  return { cert: read('PTY_WS_TLS_CERT', config.tlsCert), key: read('PTY_WS_TLS_KEY', config.tlsKey) };
}
