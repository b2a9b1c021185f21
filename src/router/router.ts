// The router without its runtime: the replay log, the session hub, the Hono app, readiness, the
// default session and the shutdown order. Each runtime adapter (src/adapter/node, src/adapter/deno)
// supplies only what differs per runtime (RouterRuntime) and serves `app.fetch`.
import type { Hono } from 'hono';
import { createApp } from '../../routes/app.ts';
import type { AppDeps } from '../../routes/deps.ts';
import type { LogCommitter, LogDatabase } from '../../storage/log-committer.ts';
import type { LogReader } from '../../storage/log-reader.ts';
import { LogJournal, type JournalFile } from '../../storage/log-journal.ts';
import { A2aControlPlane } from '../a2a/control-plane.ts';
import { FleetControlPlane } from '../a2a/fleet-plane.ts';
import { openStore } from '../../storage/open.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Listening } from './banner.ts';
import type { Config } from '../core/config.ts';
import { SessionHub } from '../hub/hub.ts';
import { sessionHostCaps } from '../hub/session-host.ts';
import { defaultSession } from '../hub/default-session.ts';
import type { HubStats, Metrics } from '../core/metrics.ts';
import type { Clock, Timers } from '../ports/clock.ts';
import type { HopTrace } from '../ports/hop-trace.ts';
import type { Logger } from '../ports/logger.ts';
import type { ScreenFactory } from '../ports/screen.ts';
import type { SessionRecord, Store } from '../ports/store.ts';
import type { WebhookTransport } from '../ports/webhook-transport.ts';
import { holdInstanceLease } from './instance-lease.ts';
import { startHeartbeat, type Heartbeat } from '../services/instance-registry.ts';
import { PTY_WS_VERSION } from '../core/version.ts';
import { readiness } from '../core/readiness.ts';
import { remoteHostChecks } from '../host-link/host-readiness.ts';
import type { PtyHostLink } from '../host-link/supervised.ts';
import { confinementMismatch } from '../core/session-confinement.ts';
import { CertificateAuthenticator } from '../auth/client-certificate.ts';
import { AttachAdmission } from '../auth/admission.ts';
import { ShareAuthenticator } from '../shares/share-authenticator.ts';
import { HostCredentials, HostTokenRefusal } from '../auth/host-credentials.ts';
import { PlacedHosts } from '../host-link/placed-hosts.ts';
import { sessionsPlacedOn } from '../hub/remote-adoption.ts';
import { BindingError } from '../protocol/errors.ts';
import { ShareService } from '../shares/share-service.ts';
import { lockStateDir, type StateLock, type StateLockPort } from '../core/state-lock.ts';
import { RetentionSweep } from './retention-sweep.ts';
import { fullDiskAtStart, type DiskFacts } from '../../storage/full-disk.ts';
import { taskOps } from '../tasks/ops.ts';
import { TaskService } from '../tasks/task-service.ts';
import { randomToken } from '../core/ids.ts';
import { WebhookSender } from '../a2a/push-sender.ts';
import { PushWorker } from '../a2a/push-worker.ts';
import { messagePushConfig } from '../a2a/push-configs.ts';
import { WebhookPolicy } from '../a2a/webhook-policy.ts';
import { IdleContexts } from '../a2a/idle-contexts.ts';

/** Where the sessions' terminal emulators run (this thread, a worker thread, a Web Worker). */
export interface ScreenService {
  create: ScreenFactory;
  close(): Promise<void>;
}

/** The Metrics port plus the runtime's exposition of it (Prometheus text). */
export interface ExposedMetrics extends Metrics {
  render(stats: HubStats): Promise<{ contentType: string; body: string }>;
}

export interface RouterRuntime {
  logger: Logger;
  clock: Clock;
  auth: Authenticator;
  metrics: ExposedMetrics;
  /** The calls the state directory's lock needs (src/core/state-lock.ts). */
  stateLock: StateLockPort;
  /**
   * The router can no longer serve (its instance lease is lost): the adapter stops serving. The
   * router has begun its own stop already.
   */
  fatal?(error: Error): void;
  /** Where the replay log's group commits run, when not on the store's client in this thread (see openStore). */
  logCommitterFor?: (db: LogDatabase) => LogCommitter | undefined;
  /** What reads the committed log for replays, when not the store's client (see openStore). */
  logReaderFor?: (db: LogDatabase) => LogReader | undefined;
  /** The write-before-send journal's files (docs/protocol.md §3.4); without it a router crash skips numbers instead of keeping frames. */
  journal?: JournalPort;
  /** The echo path's hop trace (docs/performance.md): undefined unless it is on. */
  trace?: HopTrace;
  /** Where push notifications are sent (docs/a2a.md, "Push notifications"). */
  webhooks: WebhookTransport;
  /** The timers of background work (the push outbox); default: the runtime's setTimeout. */
  timers?: Timers;
  /** Connects to the PTY host, starting one when nothing listens (called after the log is open). */
  connectPtyHost(): Promise<PtyHostLink>;
  /** Called once the PTY host answered. */
  startScreens(): ScreenService;
  /** The runtime's part of the app: the WebSocket upgrade, the socket wrapper, the peer address and any optional routes' ports. */
  app: Omit<AppDeps, RouterAppDeps>;
  /** A `file:` database's size and its filesystem's free space, for a start that fails on a full disk (storage/full-disk.ts). */
  diskFacts?(databaseUrl: string): DiskFacts | undefined;
}

export type { PtyHostLink };

/** Opens the journal's two segment files in the state directory, and names this boot. */
export interface JournalPort {
  open(stateDir: string): { files: [JournalFile, JournalFile]; bootId: string | null };
}

/** What the router itself gives the app. */
type RouterAppDeps = 'config' | 'store' | 'registry' | 'hub' | 'auth' | 'shares' | 'hosts' | 'admission' | 'a2a' | 'fleet' | 'ready' | 'renderMetrics';

export interface Router {
  app: Hono;
  hub: SessionHub;
  store: Store;
  ptyHost: PtyHostLink;
  /** The `default` session `npm start` / `deno task start` print the attach URL of (src/hub/default-session.ts). */
  createDefaultSession(): Promise<SessionRecord>;
  /**
   * After the token map was reloaded: every connection of a share whose root minter's token no
   * longer authenticates ends (4401) at once (docs/sharing.md). Never rejects (a failure is logged).
   */
  tokensReloaded(): Promise<void>;
  /**
   * Once the adapter listens: records this instance in the registry at PTY_WS_PUBLIC_URL, else at
   * `listenOrigin`, and starts its heartbeat (docs/deployment.md, "A fleet"); `stop` ends both.
   */
  announce(listenOrigin: string): Promise<void>;
  /**
   * Stops in order: `binding_goodbye` (`server_shutdown`) and close 1000 to every client (and when
   * the PTY host dies with us, `Closed` `instance_terminated` in the log), `dropConnections` (the
   * runtime ends whatever socket is still open), the log flushed and closed, the PTY host
   * connection closed (and the host stopped when this state dir started it and it runs no
   * multiplexer session), the screens stopped. Idempotent.
   */
  stop(dropConnections?: () => void): Promise<void>;
}

/** A router being served: what an adapter's CLI and the tests hold. */
export interface ServedRouter extends Listening {
  port: number;
  hub: SessionHub;
  /**
   * Re-reads PTY_WS_TOKENS_FILE (SIGHUP); open connections keep their principal, except those of
   * shares whose minter's token is gone (docs/sharing.md). False when the old map stays.
   */
  reloadTokens(): Promise<boolean>;
  close(): Promise<void>;
}

/** `reload` (the token map's), then, when it took, what a reload ends: the shares of removed tokens. */
export function reloadThen(reload: () => Promise<boolean>, router: Pick<Router, 'tokensReloaded'>): () => Promise<boolean> {
  return async () => {
    const changed = await reload();
    if (changed) await router.tokensReloaded();
    return changed;
  };
}

const realTimers: Timers = {
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};

/** Opens the log, reaches the PTY host and builds the hub and the app. Serving is the runtime's job. */
export async function startRouter(config: Config, runtime: RouterRuntime): Promise<Router> {
  const { clock } = runtime;
  // First of all: a second router on this directory would share its database and PTY host.
  const lock = await lockStateDir(config.stateDir, { instanceId: config.instanceId, now: clock.now() }, runtime.stateLock);
  try {
    const router = await startLocked(config, runtime, lock);
    const stop = router.stop;
    return { ...router, stop: (drop) => stop(drop).finally(() => lock.release()) };
  } catch (e) {
    await lock.release();
    throw fullDiskAtStart(e, config.databaseUrl, runtime.diskFacts?.(config.databaseUrl)) ?? e;
  }
}

async function startLocked(config: Config, runtime: RouterRuntime, lock: StateLock): Promise<Router> {
  const { logger, clock, metrics } = runtime;
  const journalFiles = runtime.journal?.open(config.stateDir);
  const journal = journalFiles && new LogJournal(journalFiles.files, { bootId: journalFiles.bootId, instanceId: config.instanceId });
  const store = await openStore({ url: config.databaseUrl, authToken: config.databaseAuthToken, logger, logCommitterFor: runtime.logCommitterFor, logReaderFor: runtime.logReaderFor, journal }).catch((e: unknown) => {
    journal?.close();
    throw e;
  });
  // Before any session is touched: another router may serve this instance on this database.
  // Set once the router is built; a loss before that fails the start.
  const onLoss: { stop?: (e: Error) => void; early?: Error } = {};
  const lease = await holdInstanceLease({
    store: store.leases,
    instanceId: config.instanceId,
    stateKey: lock.key,
    holder: { pid: runtime.stateLock.pid, state_dir: lock.dir },
    ttlMs: config.instanceLeaseMs,
    clock,
    logger,
    lost: (e) => (onLoss.stop ? onLoss.stop(e) : (onLoss.early = e)),
  }).catch(async (e: unknown) => {
    await store.close();
    throw e;
  });
  // Before any session is loaded: the frames a killed router sent and did not commit (docs/protocol.md §3.4).
  const recovery = await store.recoverJournal({ bootId: journalFiles?.bootId ?? null, instanceId: config.instanceId }).catch(async (e: unknown) => {
    await lease.release();
    await store.close();
    throw e;
  });
  if (recovery.recovered > 0) logger.log('warn', 'recovered log frames from the journal of a router that stopped without committing them', { frames: recovery.recovered, trusted: recovery.trusted });
  const ptyHost = await runtime.connectPtyHost().catch(async (e: unknown) => {
    await lease.release();
    await store.close();
    throw e;
  });

  const mismatch = confinementMismatch(config, ptyHost.confinement);
  if (mismatch) {
    await ptyHost.stop();
    await lease.release();
    await store.close();
    throw new Error(mismatch);
  }

  // binding_hello advertises exactly what this host reported it can run.
  const sessionHost = sessionHostCaps(ptyHost.backends, ptyHost.confinement);
  const screens = runtime.startScreens();
  const tasks = new TaskService({ store: store.tasks, clock, logger });
  const timers = runtime.timers ?? realTimers;
  // Push notifications (docs/a2a.md): webhooks checked when set and before every POST; the outbox
  // is delivered by this router for this instance's tasks, woken by each task write that queued one.
  const webhooks = new WebhookSender({ transport: runtime.webhooks, policy: new WebhookPolicy(config), timeoutMs: config.push.timeoutMs });
  const push = { store: store.push, sender: webhooks, clock, maxConfigsPerTask: config.push.maxConfigsPerTask };
  const pushWorker = new PushWorker({ ...push, instanceId: config.instanceId, owner: randomToken(), settings: config.push, timers, logger, metrics });
  const unwatchPush = store.onPushQueued(() => pushWorker.wake());
  // Sessions A2A messages started end once idle (docs/a2a.md); `hub` is set before any is loaded.
  const idleContexts = new IdleContexts({ kill: (id) => hub.kill(id), quietSince: (id) => tasks.quietSince(id), clock, timers, logger, idleMs: config.a2aContextIdleSeconds * 1000 });
  // The local host, and the remote ones that link in (docs/remote-hosts.md). A host credential
  // links its host and is refused everywhere else (the auth below).
  const placed: PlacedHosts = new PlacedHosts(ptyHost.host, logger.child({ component: 'hosts' }), {
    clock: () => clock.now(),
    placedOn: (host) => sessionsPlacedOn(store, config.instanceId, host),
    adopt: (host, listed): Promise<void> => hub.adoptRemote(host, listed),
    lost: (host, reason) => hub.remoteHostLost(host, reason),
  });
  const hostCredentials = new HostCredentials(store.hosts, clock, config.instanceId);
  const hub = new SessionHub({
    config,
    store,
    pty: placed,
    placement: (host, backend) => placementCheck(hostCredentials, placed, host, backend),
    hostShell: (host) => placed.linked(host)?.shell,
    remoteLinked: (host) => placed.linked(host) !== undefined,
    clock,
    logger,
    sessionHost,
    screens: (cols, rows, onParsed, onFailed) => screens.create(cols, rows, onParsed, onFailed),
    metrics,
    ops: taskOps(tasks, (p, raw, continuing) => messagePushConfig(push, p, raw, continuing)),
    replayFilter: tasks.replayFilter,
    // The task runner follows each terminal from the start: whether a human is mid-line matters later.
    sessionLoaded: (session) => {
      tasks.forSession(session);
      idleContexts.loaded(session);
    },
    trace: runtime.trace,
  });
  try {
    // Either reads the database: a failure here must not leave the PTY host running.
    await tasks.start(config.instanceId);
    await hub.start(recovery.hostEvents);
  } catch (e) {
    unwatchPush();
    idleContexts.stop();
    await (ptyHost.startedHere() ? ptyHost.stop() : ptyHost.close());
    await screens.close();
    await lease.release();
    await store.close();
    throw e;
  }

  // What is kept beyond the replay floor (docs/operations.md, "Disk"); its first sweep runs in the
  // background: a start on a database with much to delete is not held up by it.
  const sweep = new RetentionSweep({ retention: store.retention, limitLogBytes: (limit) => store.limitLogBytes(limit), config, clock, logger, metrics });
  void sweep.start();

  // Share links are bearers too, for every route and the upgrade (docs/sharing.md).
  // A client certificate (mTLS) names the caller when no bearer is presented.
  const shareAuth = new ShareAuthenticator(runtime.auth, store.shares, clock, config.instanceId);
  const auth = new CertificateAuthenticator(new HostTokenRefusal(shareAuth, hostCredentials), () => clock.now());
  const shares = new ShareService({ store: store.shares, clock, instanceId: config.instanceId, endConnections: (id, error) => hub.endConnections(id, error) });
  const a2a = new A2aControlPlane({ config, store, hub, clock, taskStore: store.tasks, tasks, push });
  // What a previous run left undelivered (and what the start just queued: tasks it marked FAILED).
  pushWorker.wake();
  const app = createApp({
    ...runtime.app,
    config,
    store,
    registry: store.instances,
    hub,
    auth,
    shares,
    hosts: { credentials: hostCredentials, placed },
    admission: new AttachAdmission(
      {
        perPrincipal: config.maxConnectionsPerPrincipal,
        perInstance: config.maxConnectionsPerInstance,
        adminReserved: config.adminReservedConnections,
        attemptsPerSecond: config.upgradeAttemptsPerSecond,
      },
      () => clock.now(),
    ),
    a2a,
    fleet: new FleetControlPlane({ config, local: a2a, taskStore: store.tasks, registry: store.instances, tasks, push }),
    ready: async () =>
      readiness([
        {
          name: 'database',
          check: async () => {
            await store.lastSequence('readyz');
            // Reads may work while writes fail (a full disk): the latest write's named fault, until one gets through.
            const fault = store.writeFault();
            if (fault) throw new Error(`${String(fault.metadata.reason ?? fault.code)}: ${fault.message}`);
          },
        },
        {
          name: 'pty_host',
          check: async () => {
            const t0 = performance.now();
            await ptyHost.host.list();
            metrics.observe('pty_host_rtt_seconds', (performance.now() - t0) / 1000);
          },
        },
        ...(await remoteHostChecks(store, config.instanceId, placed)),
      ]),
    renderMetrics: async () => metrics.render(await hub.stats()),
  });

  const createDefaultSession = () => defaultSession({ config, store, hub, caps: sessionHost, clock, logger });

  let stopping: Promise<void> | null = null;
  let heartbeat: Promise<Heartbeat | null> = Promise.resolve(null);
  const announce = async (listenOrigin: string) => {
    if (stopping) return;
    const baseUrl = config.publicUrl ?? listenOrigin;
    heartbeat = heartbeat.then((h) => h ?? startHeartbeat({ store: store.instances, instanceId: config.instanceId, baseUrl, version: PTY_WS_VERSION, intervalMs: config.heartbeatMs, clock, logger }));
    await heartbeat;
  };
  const stop = (dropConnections?: () => void) =>
    (stopping ??= (async () => {
      // A host this state dir started (this router, or an earlier one on it that left the host
      // for its multiplexer sessions) stops with the router, unless it runs multiplexer sessions:
      // those are meant to outlive the router, so the host stays for the next one (which re-adopts
      // every session it runs). A host started on its own is never ours to stop.
      const managed = (await ptyHost.host.list().catch(() => [])).filter((s) => s.backend !== 'native' && s.pid > 0);
      const stopHost = ptyHost.owned() && managed.length === 0;
      if (ptyHost.owned() && !stopHost) logger.log('info', 'leaving the PTY host running: it runs multiplexer sessions', { pid: ptyHost.pid(), sessions: managed.length });
      idleContexts.stop();
      await sweep.stop();
      await hub.shutdown(stopHost);
      // Remote hosts keep their sessions and link again, to the next router.
      placed.dropAll(1001, 'router stopping');
      dropConnections?.();
      // What is still undelivered stays in the outbox for the next start.
      unwatchPush();
      await pushWorker.stop();
      // Unreachable for the fleet before another router may take the instance id.
      await (await heartbeat.catch(() => null))?.stop();
      await lease.release();
      await store.close();
      await (stopHost ? ptyHost.stop() : ptyHost.close());
      await screens.close();
    })());

  onLoss.stop = (e) => {
    void stop().catch((err: unknown) => logger.log('error', 'stop after the lease was lost failed', { error: err }));
    runtime.fatal?.(e);
  };
  if (onLoss.early) {
    await stop();
    throw onLoss.early;
  }

  const tokensReloaded = async () => {
    try {
      const ended = await shares.endOrphaned((s) => shareAuth.holds(s));
      if (ended.length > 0) logger.log('info', 'audit.shares_orphaned', { shares: ended.length, share_ids: ended });
    } catch (e) {
      logger.log('error', 'ending the shares of removed tokens failed: they are refused at their next authentication', { error: e });
    }
  };

  return { app, hub, store, ptyHost, createDefaultSession, tokensReloaded, announce, stop };
}

/** A new session may go to a remote host that has a credential here, is linked now and offers its backend. */
async function placementCheck(credentials: HostCredentials, placed: PlacedHosts, host: string, backend: string): Promise<void> {
  if (!(await credentials.list()).some((h) => h.name === host)) {
    throw new BindingError('INVALID_REQUEST', `no PTY host ${host} is known here (pty-ws token --host ${host} makes its credential)`, { metadata: { reason: 'host_unknown' } });
  }
  const link = placed.linked(host);
  if (!link) throw new BindingError('INVALID_REQUEST', `the PTY host ${host} is not linked to this router now (pty-ws host --connect ... --name ${host})`, { metadata: { reason: 'host_unreachable' } });
  // What the host offers is its own choice (--backends): never another backend in its place.
  if (!link.backends.includes(backend)) {
    throw new BindingError('UNSUPPORTED_OPERATION', `the PTY host ${host} does not offer the ${backend} backend (it offers: ${link.backends.join(', ')})`, {
      metadata: { reason: 'session_backend.not_implemented', session_backend: backend, host },
      extra: { reason: 'session_backend.not_implemented' },
    });
  }
}

