// Contexts an A2A message started (no contextId: a new session, marked `a2a` at creation) end once
// they have been idle for PTY_WS_A2A_CONTEXT_IDLE_SECONDS: no unfinished task and no attached client
// all that time (docs/a2a.md, "Contexts are sessions"; A2A v1.0 §3.4.1 lets an agent expire
// contexts). A generic A2A client that never reuses a context would otherwise leave a live shell
// behind per message. Sessions made otherwise (REST, the default session) are never ended here.
import type { Session } from '../hub/types.ts';
import type { Clock, Timer, Timers } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';

export interface IdleContextDeps {
  /** Ends a session as REST DELETE does. */
  kill(sessionId: string): Promise<unknown>;
  /** Null while the session has an unfinished task; else when its last task finished. */
  quietSince(sessionId: string): number | null;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** 0: contexts never expire. */
  idleMs: number;
}

/** Looked at this often (within its idle time, a context ends up to one sweep late). */
const SWEEP_MAX_MS = 30_000;

export class IdleContexts {
  private readonly watched = new Map<string, { session: Session; since: number }>();
  private timer: Timer | null = null;

  constructor(private readonly deps: IdleContextDeps) {}

  /** A session the hub loaded: watched when an A2A message started it and it has not ended. */
  loaded(session: Session): void {
    const { idleMs, clock } = this.deps;
    if (idleMs === 0 || session.latestRecord.createdVia !== 'a2a' || session.state === 'closed' || this.watched.has(session.id)) return;
    const entry = { session, since: clock.now() };
    this.watched.set(session.id, entry);
    session.observe({
      // Someone was attached until now: the idle time starts again.
      left: () => (entry.since = clock.now()),
      ended: () => this.watched.delete(session.id),
    });
    this.arm();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
    this.watched.clear();
  }

  private arm(): void {
    if (this.timer || this.watched.size === 0) return;
    const every = Math.min(SWEEP_MAX_MS, Math.max(50, Math.floor(this.deps.idleMs / 4)));
    this.timer = this.deps.timers.after(every, () => {
      this.timer = null;
      this.sweep();
      this.arm();
    });
  }

  private sweep(): void {
    const { clock, idleMs, logger } = this.deps;
    const now = clock.now();
    for (const [id, entry] of this.watched) {
      const { session } = entry;
      if (session.state === 'closed' || session.ending) {
        this.watched.delete(id);
        continue;
      }
      const members = session.membership();
      const quiet = this.deps.quietSince(id);
      if (quiet === null || members.controllers.length + members.observers.length > 0) {
        entry.since = now;
        continue;
      }
      entry.since = Math.max(entry.since, quiet);
      if (now - entry.since < idleMs) continue;
      this.watched.delete(id);
      logger.log('info', 'audit.context_expired', { session: id, idle_seconds: Math.round((now - entry.since) / 1000) });
      this.deps.kill(id).catch((e: unknown) => logger.log('warn', 'an idle A2A context could not be ended', { session: id, error: e }));
    }
  }
}
