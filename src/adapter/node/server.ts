// The Node adapter: wires the portable core to node:http, `ws`, the PTY host process and a libSQL file.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve, upgradeWebSocket, type ServerType } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import { createApp } from '../../../routes/app.ts';
import { openStore } from '../../../storage/open.ts';
import { HashedTokenAuthenticator, NO_AUTH, type Authenticator } from '../../auth/authenticator.ts';
import type { Config } from '../../config.ts';
import { SessionHub } from '../../hub/hub.ts';
import { sessionHostCaps } from '../../hub/session-host.ts';
import { newSessionRecord } from '../../hub/session-record.ts';
import { randomToken, sha256Hex } from '../../ids.ts';
import { negotiate } from '../../protocol/subprotocol.ts';
import type { Logger, PtyHost, SessionRecord } from '../../ports.ts';
import { jsonLogger } from './logger.ts';
import { SupervisedPtyHost } from './supervised-pty-host.ts';
import { wrapNodeSocket } from './ws-connection.ts';

export interface RunningServer {
  port: number;
  /** http://host:port */
  origin: string;
  /** The bearer token generated for this run (null when auth is off or tokens come from config). */
  devToken: string | null;
  defaultSession: SessionRecord | null;
  hub: SessionHub;
  /** The pid of the PTY host the router is connected to (null while it is unreachable). */
  ptyHostPid(): number | null;
  close(): Promise<void>;
}

export interface StartOptions {
  createDefaultSession?: boolean;
  logger?: Logger;
  /** Wraps the PtyHost port the hub talks to (a test makes the router slower than its PTYs with it). */
  decoratePtyHost?: (host: PtyHost) => PtyHost;
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = opts.logger ?? jsonLogger(config.logLevel, { instance: config.instanceId });
  const { auth, devToken } = await authenticatorFor(config);

  mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
  if (config.databaseUrl.startsWith('file:')) mkdirSync(dirname(resolve(config.databaseUrl.slice('file:'.length))), { recursive: true });
  const store = await openStore({ url: config.databaseUrl, authToken: config.databaseAuthToken, logger });
  const ptyHost = await SupervisedPtyHost.start({ socketPath: resolve(config.ptySocket), logger, logLevel: config.logLevel }).catch(async (e: unknown) => {
    await store.close();
    throw e;
  });
  // binding_hello advertises exactly what this host reported it can run.
  const sessionHost = sessionHostCaps(ptyHost.backends);
  const pty = opts.decoratePtyHost?.(ptyHost) ?? ptyHost;
  const hub = new SessionHub({ config, store, pty, clock: { now: Date.now }, logger, sessionHost });
  try {
    await hub.start();
  } catch (e) {
    await (ptyHost.startedHost ? ptyHost.stop() : ptyHost.close());
    await store.close();
    throw e;
  }

  const keepalive = { pingIntervalMs: config.pingIntervalMs, pongTimeoutMs: config.pongTimeoutMs };
  const app = createApp({
    config,
    store,
    hub,
    auth,
    upgradeWebSocket,
    wrapSocket: (ws, binary, onStale) => wrapNodeSocket(ws, binary, keepalive, onStale),
    ready: async () => {
      try {
        await store.lastSequence('healthz');
        await ptyHost.list();
        return true;
      } catch {
        return false;
      }
    },
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

  const server = await listen(() => serve({ fetch: app.fetch, port: config.port, hostname: config.host, websocket: { server: wss } }));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  let defaultSession: SessionRecord | null = null;
  if (opts.createDefaultSession) {
    defaultSession = newSessionRecord(
      { instanceId: config.instanceId, caps: sessionHost, defaultCols: config.defaultCols, defaultRows: config.defaultRows, createdBy: null, now: Date.now() },
      { label: 'default' },
    );
    await store.createSession(defaultSession);
  }

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      server.close();
      // A host this router started stops with it, unless it runs multiplexer sessions: those
      // are meant to outlive the router, so the host stays for the next one (which re-adopts
      // every session it runs). A host started on its own is never ours to stop.
      const managed = (await ptyHost.list().catch(() => [])).filter((s) => s.backend !== 'native' && s.pid > 0);
      const stopHost = ptyHost.startedHost && managed.length === 0;
      if (ptyHost.startedHost && !stopHost) logger.log('info', 'leaving the PTY host running: it runs multiplexer sessions', { pid: ptyHost.hostPid, sessions: managed.length });
      await hub.shutdown(stopHost);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      if ('closeAllConnections' in server) server.closeAllConnections();
      await store.close();
      if (stopHost) await ptyHost.stop();
      else await ptyHost.close();
    })());

  return { port, origin, devToken, defaultSession, hub, ptyHostPid: () => ptyHost.hostPid, close };
}

async function authenticatorFor(config: Config): Promise<{ auth: Authenticator; devToken: string | null }> {
  if (config.tokensFile || config.jwtSecret || config.jwtPublicKey || config.jwksUrl) {
    throw new Error('PTY_WS_TOKENS_FILE and JWT bearers are not implemented yet (issue 7); use the generated dev token or PTY_WS_AUTH=off');
  }
  if (!config.auth) {
    if (config.production) throw new Error('PTY_WS_AUTH=off is refused with PTY_WS_PRODUCTION=1');
    return { auth: NO_AUTH, devToken: null };
  }
  const token = randomToken();
  return { auth: new HashedTokenAuthenticator([{ sha256: await sha256Hex(token), principal: 'dev', scopes: ['pty:control'] }]), devToken: token };
}

function listen(start: () => ServerType): Promise<ServerType> {
  return new Promise((resolvePromise, reject) => {
    const server = start();
    server.once('listening', () => resolvePromise(server));
    server.once('error', reject);
  });
}
