// One session's process lifecycle (docs/protocol.md §5.3, §5.4) as an explicit state, and the
// session record that goes with it: what this router knows is ahead of the store, where updates
// wait behind queued log commits, so the record is kept here and persisted in the background.
import { BindingError } from '../protocol/errors.ts';
import type { JoinSession } from '../protocol/pty-payloads.ts';
import type { Logger } from '../ports/logger.ts';
import type { PtyExit, PtySessionInfo } from '../ports/pty-host.ts';
import type { SessionPatch, SessionRecord, SessionState, Store } from '../ports/store.ts';
import type { CloseReason } from './types.ts';
import { hostDownError, type HostDown } from './host-notices.ts';

/**
 * - `created`: no process yet. `killRequested` survives a failed start, so a process started later
 *   is still killed.
 * - `starting`: a spawn is under way; every start waits for the same one.
 * - `running`: the PTY host runs it. `hostDown` says why nothing reaches it while the host is
 *   unreachable (`host`: the remote host whose link is down, docs/remote-hosts.md); `killRequested`
 *   makes its exit `killed`.
 * - `closed`: over. `stored` once the store holds it as closed; `readers` are joins of the ended
 *   session still cutting their flush. With both done, nothing of it needs to stay in memory.
 */
export type Phase =
  | { state: 'created'; killRequested: boolean }
  | { state: 'starting'; started: Promise<void>; killRequested: boolean }
  | { state: 'running'; killRequested: boolean; hostDown: HostDown | null }
  | { state: 'closed'; stored: boolean; readers: number };

/** How a running process's end reads in its Closed frame. */
export interface Ending {
  reason: CloseReason;
  exitCode: number | null;
  detail?: string;
}

/** The start itself (a spawn on the PTY host): resolves with what the record gains, or throws. */
export type Starter = (req: JoinSession, firstController: boolean) => Promise<SessionPatch & { state: 'running' }>;

export class Lifecycle {
  private rec: SessionRecord;
  private now: Phase;

  constructor(
    record: SessionRecord,
    private readonly deps: { store: Store; logger: Logger; clock: { now(): number } },
    private readonly hooks: {
      /** Delivers a kill asked for while the process was starting, once it exists. */
      signal(): void;
      /** Runs once the closed record is stored (the session may then be retired). */
      stored(): void;
    },
  ) {
    this.rec = record;
    this.now = initialPhase(record.state);
  }

  get record(): Readonly<SessionRecord> {
    return this.rec;
  }

  get phase(): Readonly<Phase> {
    return this.now;
  }

  /** The state REST and the hub see: a process that is starting is still `created`. */
  get state(): SessionState {
    return this.rec.state;
  }

  get ended(): boolean {
    return this.now.state === 'closed';
  }

  /** Ended, or asked to end (REST DELETE) and waiting for its process to go. */
  get ending(): boolean {
    return this.now.state === 'closed' || this.now.killRequested;
  }

  /** Starts the process unless it runs (or is starting: then it waits for that start). */
  ensureStarted(req: JoinSession, firstController: boolean, start: Starter): Promise<void> {
    const p = this.now;
    if (p.state === 'running' || p.state === 'closed') return Promise.resolve();
    if (p.state === 'starting') return p.started;
    const started = this.start(req, firstController, start);
    this.now = { state: 'starting', started, killRequested: p.killRequested };
    return started;
  }

  private async start(req: JoinSession, firstController: boolean, start: Starter): Promise<void> {
    let patch: SessionPatch & { state: 'running' };
    try {
      patch = await start(req, firstController);
    } catch (e) {
      if (this.now.state === 'starting') this.now = { state: 'created', killRequested: this.now.killRequested };
      throw e;
    }
    // The process may have ended already (its exit is an event of its own): then it stays ended.
    if (this.now.state === 'closed') return;
    if (this.now.state === 'starting') this.now = { state: 'running', killRequested: this.now.killRequested, hostDown: null };
    this.rec = { ...this.rec, ...patch };
    await this.persist(patch);
    if (this.now.state === 'running' && this.now.killRequested) this.hooks.signal();
  }

  requireRunning(): void {
    if (this.rec.state !== 'running') throw new BindingError('INVALID_REQUEST', `session ${this.rec.id} is not running`);
  }

  requireHost(): void {
    if (this.now.state === 'running' && this.now.hostDown) throw hostDownError(this.now.hostDown, `${this.now.hostDown.message}; try again shortly`);
  }

  /** False unless the process runs: only then does a lost host matter to it. */
  hostLost(down: HostDown): boolean {
    if (this.rec.state !== 'running' || this.now.state !== 'running') return false;
    this.now = { ...this.now, hostDown: down };
    return true;
  }

  /**
   * The PTY host runs the process (after a router restart, or once a lost host is back). `started`
   * when that is news: a `created` record whose start was not recorded is running now; `back` is
   * why it was out of reach until now, if it was.
   */
  adopted(info: PtySessionInfo, sessionClass: string): { started: boolean; back?: HostDown } {
    const back = this.now.state === 'running' ? (this.now.hostDown ?? undefined) : undefined;
    if (this.now.state === 'running') this.now = { ...this.now, hostDown: null };
    if (this.rec.state !== 'created') return { started: false, back };
    // Its start was not recorded before the router went down. A session listed only for its
    // unreported exit has no size (0): keep the record's.
    const patch = { backend: info.backend, sessionClass, state: 'running' as const, cols: info.cols || this.rec.cols, rows: info.rows || this.rec.rows };
    this.now = { state: 'running', killRequested: this.now.state !== 'closed' && this.now.killRequested, hostDown: null };
    this.rec = { ...this.rec, ...patch };
    void this.persist(patch);
    return { started: true };
  }

  /** A member was admitted: from now on the session is not fresh, after a router restart too. */
  joined(): void {
    if (this.rec.hadMember) return;
    this.rec = { ...this.rec, hadMember: true };
    void this.persist({ hadMember: true });
  }

  resized(cols: number, rows: number): void {
    this.rec = { ...this.rec, cols, rows };
    void this.persist({ cols, rows });
  }

  /**
   * A kill asked for on purpose (REST DELETE). `signal`: deliver SIGHUP now. `end`: end the
   * session here at once, with this detail. `wait`: the start under way delivers it. Null: it had
   * already ended.
   */
  kill(): { do: 'signal' } | { do: 'wait' } | { do: 'end'; detail: string } | null {
    const p = this.now;
    if (p.state === 'closed') return null;
    if (p.state === 'starting') {
      this.now = { ...p, killRequested: true };
      return { do: 'wait' };
    }
    if (p.state === 'created') return { do: 'end', detail: 'deleted before it started' };
    this.now = { ...p, killRequested: true };
    // With the host unreachable the kill cannot be delivered: the session ends here, and a
    // host that comes back still running it is told to kill it (see SessionHub.adopt).
    return p.hostDown ? { do: 'end', detail: 'deleted while the PTY host was unreachable' } : { do: 'signal' };
  }

  /** How the process's exit reads: `killed` after a kill or by a signal, else `normal`. */
  exited(exit: PtyExit): Ending {
    const signalled = exit.signal !== null && exit.signal !== 0;
    const killRequested = this.now.state !== 'closed' && this.now.killRequested;
    return {
      reason: killRequested || signalled ? 'killed' : 'normal',
      exitCode: signalled ? null : exit.exitCode,
      detail: signalled ? `signal ${exit.signal}` : undefined,
    };
  }

  /** The session is over: recorded here at once, in the store in the background. */
  close(end: Ending): void {
    const closedAt = new Date(this.deps.clock.now()).toISOString();
    this.now = { state: 'closed', stored: false, readers: 0 };
    this.rec = { ...this.rec, state: 'closed', exitCode: end.exitCode, closeReason: end.reason, closedAt };
    void this.persist({ state: 'closed', exitCode: end.exitCode, closeReason: end.reason, closedAt }).then(() => {
      if (this.now.state === 'closed') this.now = { ...this.now, stored: true };
      this.hooks.stored();
    });
  }

  /** A join of the ended session starts (true) or ends (false) reading it. */
  reading(begins: boolean): void {
    if (this.now.state === 'closed') this.now = { ...this.now, readers: this.now.readers + (begins ? 1 : -1) };
  }

  /** Ended, stored and nobody reading it: nothing of it needs to stay in memory. */
  get idle(): boolean {
    return this.now.state === 'closed' && this.now.stored && this.now.readers === 0;
  }

  private async persist(patch: SessionPatch): Promise<void> {
    try {
      await this.deps.store.updateSession(this.rec.id, patch);
    } catch (e) {
      this.deps.logger.log('error', 'session update failed', { session: this.rec.id, error: e });
    }
  }
}

/** A session loaded from its record: one stored as closed is over and stored already. */
function initialPhase(state: SessionState): Phase {
  if (state === 'closed') return { state: 'closed', stored: true, readers: 0 };
  if (state === 'running') return { state: 'running', killRequested: false, hostDown: null };
  return { state: 'created', killRequested: false };
}

