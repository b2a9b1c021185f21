// The session hub: live sessions by id, PTY events routed to them, connections attached to them.
import type { Principal } from '../auth/principal.ts';
import type { BindingError } from '../protocol/errors.ts';
import { hasScope } from '../auth/principal.ts';
import type { JoinRights } from './join-spec.ts';
import type { ClientConnection } from '../ports/client-connection.ts';
import type { PtySessionInfo } from '../ports/pty-host.ts';
import type { ScreenFactory } from '../ports/screen.ts';
import type { SessionRecord, Store } from '../ports/store.ts';
import { adoptRemoteSessions } from './remote-adoption.ts';
import type { HubStats } from '../core/metrics.ts';
import { A2A_CORE_OPERATIONS } from '../protocol/hello.ts';
import { Attachment } from './attachment.ts';
import { auditIdentity, type Peer } from './audit.ts';
import { CredentialEnds, type CredentialBound } from './credential-ends.ts';
import type { HubDeps } from './deps.ts';
import { LiveSession } from './live-session.ts';
import type { Session } from './types.ts';
import { HostEventLedger } from './host-events.ts';
import { HubFlow } from './session-flow.ts';
import { HostLink } from './host-link.ts';

export class SessionHub {
  private readonly byId = new Map<string, LiveSession>();
  private readonly loading = new Map<string, Promise<LiveSession>>();
  private readonly attachments = new Set<Attachment>();
  /** Flow control: each session's PTY paused alone when its consumers fall behind, all of them past a backstop. */
  private readonly flow: HubFlow;
  private unsubscribe: (() => void) | null = null;
  private unwatchStore: Array<() => void> = [];
  private readonly hostLink: HostLink;
  private readonly hostEvents: HostEventLedger;
  /** What ends with its principal's credential: attachments and A2A streams (docs/sharing.md). */
  private readonly credentials: CredentialEnds;

  constructor(readonly deps: HubDeps) {
    this.credentials = new CredentialEnds({ clock: deps.clock, logger: deps.logger });
    this.flow = new HubFlow({ pty: deps.pty, store: deps.store, screens: deps.screens, logger: deps.logger, metrics: deps.metrics, pollMs: deps.config.lag.pollMs });
    this.hostEvents = new HostEventLedger(deps.pty);
    this.hostLink = new HostLink(deps.config.ptyHostLossGraceMs);
  }

  /**
   * Re-adopts what the PTY host runs (it may have outlived an earlier router), closes what it
   * lost, then lets its events flow: output it held while no router listened comes first.
   */
  async start(journaled: ReadonlyMap<string, Record<string, number>> = new Map()): Promise<void> {
    this.hostEvents.seed(journaled);
    this.unwatchStore = [
      this.deps.store.onLogLoss((loss) => this.byId.get(loss.sessionId)?.logLost(loss)),
      this.flow.watchStore(),
    ];
    this.unsubscribe = this.deps.pty.subscribe({
      onData: (id, data, n) => {
        this.deps.trace?.('router.hub_in');
        const s = this.routed(id, n);
        // Output for no session here is of no use: taken at once.
        if (!s) return this.flow.taken(id, data.byteLength);
        s.onOutput(data, n);
        this.flow.output(id);
      },
      onExit: (id, exit, n) => this.routed(id, n)?.onExit(exit, n),
      onHostLost: (reason) => this.hostLost(reason),
      onHostRestored: () => void this.hostRestored(),
    });
    await this.adopt('the process ended while no router was connected to the PTY host, and how it ended is unknown');
    this.hostEvents.startEvents();
  }

  /** The session an event is for; an event for none is of no use and is acknowledged at once. */
  private routed(sessionId: string, n: number | undefined): LiveSession | undefined {
    const s = this.byId.get(sessionId);
    if (!s && n !== undefined) this.hostEvents.handled(sessionId, n);
    return s;
  }

  /** A session as the routes see it (the narrow `Session`), loaded on first use; undefined when the store has none. */
  session(sessionId: string): Promise<Session | undefined> {
    return this.live(sessionId);
  }

  /** The whole live session, for the attachments this hub makes. */
  async live(sessionId: string): Promise<LiveSession | undefined> {
    const hit = this.byId.get(sessionId);
    if (hit) return hit;
    let pending = this.loading.get(sessionId);
    if (!pending) {
      pending = this.load(sessionId);
      this.loading.set(sessionId, pending);
      void pending.finally(() => this.loading.delete(sessionId)).catch(() => undefined);
    }
    return pending.catch(() => undefined);
  }

  /** Whether the hub holds the session in memory (a running one, or an ended one not yet retired). */
  holds(sessionId: string): boolean {
    return this.byId.has(sessionId);
  }

  /**
   * A new connection on a session. Its principal is fixed for its life; when the principal's
   * credential expires, the connection ends with UNAUTHENTICATED and close 4401, whatever its role.
   */
  attach(record: SessionRecord, conn: ClientConnection, principal: Principal, peer: Peer = {}): Attachment {
    const logger = this.deps.logger.child({ session: record.id, ...auditIdentity(principal, peer) });
    const a = new Attachment(this, record.id, conn, principal, logger);
    this.attachments.add(a);
    logger.log('info', 'audit.connect', { client_id: a.clientId });
    const release = this.credentials.hold(principal, a, logger);
    a.onEnded(() => {
      this.attachments.delete(a);
      release();
    });
    return a;
  }

  /**
   * Ends a session (its process, or its chance to start one); `Closed` (`killed`) reaches every
   * attached client. Null when it had already ended.
   */
  async kill(sessionId: string): Promise<'closing' | 'closed' | null> {
    const s = await this.live(sessionId);
    return s ? s.kill() : null;
  }

  /**
   * A connection made outside this hub (an A2A SSE stream, docs/a2a.md Streams) that must end with
   * its principal's credential like an attachment: on expiry, and on `endConnections`. Call the
   * returned release when it ends on its own.
   */
  endWithCredential(principal: Principal, conn: CredentialBound): () => void {
    return this.credentials.hold(principal, conn, this.deps.logger.child(auditIdentity(principal, {})));
  }

  /**
   * Ends every connection authenticated as this principal, whatever its role or binding: a final
   * UNAUTHENTICATED Error, then close 4401 on pty-ws, an error event and the end of the stream on
   * SSE (a revoked share). `error` is that Error, fatal. Returns how many were ended.
   */
  endConnections(principalId: string, error: BindingError): number {
    return this.credentials.endAll(principalId, error);
  }

  /** The A2A core operations registered on this hub: what binding_hello and the AgentCard advertise. */
  supportedOperations(): string[] {
    const ops = this.deps.ops ?? {};
    return A2A_CORE_OPERATIONS.filter((op) => Object.hasOwn(ops, op));
  }

  /** Sessions by state and backend, joined clients by role: read when metrics are scraped. */
  async stats(): Promise<HubStats> {
    const sessions = new Map<string, { state: string; backend: string; count: number }>();
    for (const rec of await this.deps.store.listSessions(this.deps.config.instanceId)) {
      const state = this.byId.get(rec.id)?.state ?? rec.state;
      const key = `${state}/${rec.backend}`;
      const entry = sessions.get(key) ?? { state, backend: rec.backend, count: 0 };
      entry.count++;
      sessions.set(key, entry);
    }
    const roles = new Map<string, number>();
    for (const s of this.byId.values()) {
      const m = s.membership();
      roles.set('controller', (roles.get('controller') ?? 0) + m.controllers.length);
      roles.set('observer', (roles.get('observer') ?? 0) + m.observers.length);
    }
    return { sessions: [...sessions.values()], clients: [...roles].map(([role, count]) => ({ role, count })) };
  }

  rights(p: Principal): JoinRights {
    return { principalId: p.id, mayControl: hasScope(p, 'pty:control'), mayAdmin: hasScope(p, 'pty:admin') };
  }

  /**
   * Orderly stop: when the processes die with the server, their sessions end first, as
   * `instance_terminated`, so their members hear `Closed` before the goodbye; then
   * `binding_goodbye` (`server_shutdown`) and close 1000 to every connection.
   */
  async shutdown(processesEnd: boolean): Promise<void> {
    this.unsubscribe?.();
    for (const unwatch of this.unwatchStore) unwatch();
    this.hostLink.stop();
    this.flow.close();
    // A remote host's sessions outlive this router whatever the local host does (docs/remote-hosts.md).
    if (processesEnd) for (const s of [...this.byId.values()]) if (s.latestRecord.host === null) s.terminate('instance_terminated', 'server shutdown', 'server_shutdown');
    for (const a of [...this.attachments]) a.goodbye('server_shutdown');
    for (const s of this.byId.values()) s.log.stop();
    await this.deps.store.flush();
    // Everything numbered is stored: the next start numbers on with nothing skipped
    // (docs/protocol.md §3.4). Had frames been lost, flush rejects and the ceilings stay.
    await this.deps.store.releaseSequences(new Map([...this.byId.values()].map((s) => [s.id, s.currentSequence])));
  }

  /**
   * Reconciles the store with what the PTY host lists. Running sessions it has stay running;
   * the others are closed with reason `error` and `lostDetail`. A session we consider closed
   * that the host still runs is killed rather than left orphaned.
   */
  private async adopt(lostDetail: string): Promise<void> {
    const { pty, store, config, logger } = this.deps;
    const listed = new Map((await pty.list()).map((info) => [info.sessionId, info]));
    for (const rec of await store.listSessions(config.instanceId)) {
      // A remote host's sessions are not the local host's to list: they come and go with its link (docs/remote-hosts.md).
      if (rec.host !== null) continue;
      const info = listed.get(rec.id);
      const state = this.byId.get(rec.id)?.state ?? rec.state;
      if (state === 'closed' && info && info.pid > 0) {
        logger.log('warn', 'the PTY host runs a session that is closed here: killing it', { session: rec.id });
        pty.kill(rec.id);
      }
      if (state === 'closed' || (state === 'created' && !info)) continue;
      const s = await this.live(rec.id);
      if (info) s?.adopted(info);
      else s?.terminate('error', lostDetail);
    }
  }

  /** A remote host linked: take up the sessions placed on it that it lists (src/hub/remote-adoption.ts). */
  adoptRemote(host: string, listed: readonly PtySessionInfo[]): Promise<void> {
    const { store, config, logger, pty } = this.deps;
    return adoptRemoteSessions({ store, instanceId: config.instanceId, live: (id) => this.live(id), kill: (id) => pty.kill(id), logger }, host, listed);
  }

  /**
   * A remote host's link is down (docs/remote-hosts.md): the host keeps its sessions and this
   * router waits for it, with no grace: their members hear it, and input is refused until it links
   * again and `adoptRemote` takes them up.
   */
  remoteHostLost(host: string, reason: string): void {
    const message = `the PTY host ${host} is unreachable (its link was lost: ${reason}); its sessions go on once it links again`;
    for (const s of this.byId.values()) if (s.lifecycle.record.host === host) s.hostLost(message, host);
  }

  /** False between losing the PTY host and re-adopting what a host runs again. */
  get ptyHostReachable(): boolean {
    return this.hostLink.reachable;
  }

  private hostLost(reason: string): void {
    this.deps.logger.log('error', 'PTY host connection lost', { reason });
    const message = `the PTY host connection was lost (${reason}); reconnecting`;
    for (const s of this.byId.values()) s.hostLost(message);
    this.hostLink.lost(() => {
      for (const s of [...this.byId.values()]) s.terminate('error', `the PTY host has been unreachable since: ${reason}`);
    });
  }

  private async hostRestored(): Promise<void> {
    this.hostLink.restoring();
    try {
      await this.adopt('the PTY host was lost, and the process with it');
      this.hostEvents.startEvents();
      this.hostLink.restored(true);
    } catch (e) {
      // The host went away again: onHostLost follows and the next restore tries again.
      this.deps.logger.log('error', 'could not re-adopt the PTY host sessions', { error: e });
      this.hostLink.restored(false);
    }
  }

  private async load(sessionId: string): Promise<LiveSession> {
    const { store, config } = this.deps;
    const rec = await store.getSession(config.instanceId, sessionId);
    if (!rec) throw new Error('no such session');
    // An ended session is loaded only for a join, and is not kept (see LiveSession's `retire`).
    // Only a session that may still run gets a flow gate (an ended one loaded for a read has no PTY).
    const flow: { makeScreen: ScreenFactory; store: Store } =
      rec.state === 'closed' ? { makeScreen: this.deps.screens, store } : this.flow.session(sessionId, () => [...(this.byId.get(sessionId)?.members.all() ?? [])].map((m) => m.queued));
    const numbers = await store.sequenceState(sessionId);
    // Numbers the router before us may have handed out and the log lacks (docs/protocol.md §3.4).
    const hole = rec.state !== 'closed' && numbers.ceiling > numbers.stored ? numbers.ceiling - numbers.stored : 0;
    const s = new LiveSession({ ...this.deps, store: flow.store }, rec, {
      // An ended session numbers nothing more: its last number is its last frame's.
      numbering: { last: rec.state === 'closed' ? numbers.stored : Math.max(numbers.stored, numbers.ceiling), ceiling: numbers.ceiling },
      skipped: numbers.skipped + hole,
      makeScreen: flow.makeScreen,
      retire: (retired) => {
        if (this.byId.get(retired.id) !== retired) return;
        this.byId.delete(retired.id);
        this.flow.forget(retired.id);
      },
      handled: (handled, n) => this.hostEvents.handled(handled.id, n),
      taken: (taker, bytes) => this.flow.taken(taker.id, bytes),
    });
    // A running session this router did not start gets its screen back from the log (an ended one only for a join).
    if (rec.state === 'running') await s.screen.ensureRebuilt();
    // Loaded while its remote host is not linked (after a router restart, say): it hears it is back when it links.
    if (rec.state === 'running' && rec.host && this.deps.remoteLinked && !this.deps.remoteLinked(rec.host)) {
      s.hostLost(`the PTY host ${rec.host} is not linked to this router now; its session goes on once it links`, rec.host);
    }
    if (hole > 0) await s.declareHole(numbers.stored, numbers.ceiling);
    if (rec.state !== 'closed') s.log.reserveAhead();
    if (rec.state !== 'closed') this.byId.set(sessionId, s);
    this.deps.sessionLoaded?.(s);
    return s;
  }
}
