// The session hub: live sessions by id, PTY events routed to them, connections attached to them.
import { onExpiry } from '../auth/expiry.ts';
import type { Principal } from '../auth/principal.ts';
import { hasScope } from '../auth/principal.ts';
import { BindingError } from '../errors.ts';
import type { ClientConnection, SessionRecord } from '../ports.ts';
import type { HubStats } from '../metrics.ts';
import { A2A_CORE_OPERATIONS } from '../protocol/hello.ts';
import { Attachment } from './attachment.ts';
import { auditIdentity, type Peer } from './audit.ts';
import type { HubDeps } from './deps.ts';
import { LiveSession } from './live-session.ts';

export class SessionHub {
  private readonly live = new Map<string, LiveSession>();
  private readonly loading = new Map<string, Promise<LiveSession>>();
  private readonly attachments = new Set<Attachment>();
  private unsubscribe: (() => void) | null = null;
  private unwatchStore: (() => void) | null = null;

  constructor(readonly deps: HubDeps) {}

  /** Starts routing PTY host events and closes sessions whose process is gone (e.g. after a restart). */
  async start(): Promise<void> {
    const { pty, store, config, logger } = this.deps;
    this.unwatchStore = store.onLogLoss((loss) => this.live.get(loss.sessionId)?.logLost(loss));
    this.unsubscribe = pty.subscribe({
      onData: (id, data) => this.live.get(id)?.onOutput(data),
      onExit: (id, exit) => this.live.get(id)?.onExit(exit),
      onHostLost: (reason) => {
        logger.log('error', 'PTY host connection lost', { reason });
        for (const s of [...this.live.values()]) s.terminate('instance_terminated', `PTY host lost: ${reason}`);
      },
    });
    const running = new Set((await pty.list()).map((s) => s.sessionId));
    for (const rec of await store.listSessions(config.instanceId)) {
      if (rec.state === 'running' && !running.has(rec.id)) {
        const s = await this.session(rec.id);
        s?.terminate('instance_terminated', 'the PTY host no longer runs this session');
      }
    }
  }

  /** The live view of a session, loaded on first use; undefined when the store has no such session. */
  async session(sessionId: string): Promise<LiveSession | undefined> {
    const hit = this.live.get(sessionId);
    if (hit) return hit;
    let pending = this.loading.get(sessionId);
    if (!pending) {
      pending = this.load(sessionId);
      this.loading.set(sessionId, pending);
      void pending.finally(() => this.loading.delete(sessionId)).catch(() => undefined);
    }
    return pending.catch(() => undefined);
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
    const expiry =
      principal.expiresAt === undefined
        ? null
        : onExpiry(principal.expiresAt, () => this.deps.clock.now(), () => {
            logger.log('info', 'audit.credential_expired', { client_id: a.clientId });
            a.end(new BindingError('UNAUTHENTICATED', 'the bearer token of this connection has expired: reconnect with a fresh one', { fatal: true }));
          });
    a.onEnded(() => {
      this.attachments.delete(a);
      expiry?.cancel();
    });
    return a;
  }

  /** Terminates a session's process; `Closed` (`killed`) reaches every attached client. */
  async kill(sessionId: string): Promise<boolean> {
    const s = await this.session(sessionId);
    if (!s || s.state !== 'running') return false;
    s.kill();
    return true;
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
      const state = this.live.get(rec.id)?.state ?? rec.state;
      const key = `${state}/${rec.backend}`;
      const entry = sessions.get(key) ?? { state, backend: rec.backend, count: 0 };
      entry.count++;
      sessions.set(key, entry);
    }
    const roles = new Map<string, number>();
    for (const s of this.live.values()) {
      const m = s.membership();
      roles.set('controller', (roles.get('controller') ?? 0) + m.controllers.length);
      roles.set('observer', (roles.get('observer') ?? 0) + m.observers.length);
    }
    return { sessions: [...sessions.values()], clients: [...roles].map(([role, count]) => ({ role, count })) };
  }

  mayControl(p: Principal): boolean {
    return hasScope(p, 'pty:control');
  }

  /**
   * Orderly stop: `binding_goodbye` (`server_shutdown`) and close 1000 to every connection. When the
   * processes die with the server, their sessions end as `instance_terminated` in the log.
   */
  async shutdown(processesEnd: boolean): Promise<void> {
    this.unsubscribe?.();
    this.unwatchStore?.();
    for (const a of [...this.attachments]) a.goodbye('server_shutdown');
    if (processesEnd) for (const s of [...this.live.values()]) s.terminate('instance_terminated', 'server shutdown');
    await this.deps.store.flush();
  }

  private async load(sessionId: string): Promise<LiveSession> {
    const { store, config } = this.deps;
    const rec = await store.getSession(config.instanceId, sessionId);
    if (!rec) throw new Error('no such session');
    const s = new LiveSession(this.deps, rec, await store.lastSequence(sessionId));
    this.live.set(sessionId, s);
    this.deps.sessionLoaded?.(s);
    return s;
  }
}
