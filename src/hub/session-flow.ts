// The router's end of each session's credit loop (docs/architecture.md, "The credit loop"): the
// hub gives the PTY host credit back for a session's output as it takes it (pty-events.ts), and
// withholds it while any of that session's consumers is behind, so the host pauses that PTY alone
// once the loop's high mark is untaken, and every other session flows on. A session's consumers
// are its emulator (bytes not parsed yet), its share of the log writer's queue (bytes not
// committed yet, log-ledger.ts) and its members' sockets, once every one of them is behind: a
// member that keeps up is served, and a slow one beside it lags instead (docs/protocol.md §6.4).
// Their marks: CONSUMER_MARKS in src/core/flow-budget.ts. The router-wide backstop, far above a
// session's marks, is a different concern (this router's memory, the store's queue cap): past it
// the router stops reading the host link, and every PTY pauses.
import { CONSUMER_MARKS, ROUTER_BACKSTOP_MARKS } from '../core/flow-budget.ts';
import type { Metrics } from '../core/metrics.ts';
import type { Logger } from '../ports/logger.ts';
import type { PtyHost } from '../ports/pty-host.ts';
import type { Screen, ScreenFactory } from '../ports/screen.ts';
import type { Store } from '../ports/store.ts';
import { accountedScreen, FlowGate, Watermark } from './flow-control.ts';
import { LogLedger, type Backlog } from './log-ledger.ts';

const marks = (m: { high: number; low: number }) => [m.high, m.low] as const;

/** One session's end of the credit loop. */
class SessionFlow {
  private readonly gate: FlowGate;
  readonly screen: Watermark;
  readonly log: Watermark;
  private clientsPoll: ReturnType<typeof setInterval> | null = null;
  private disposed = false;
  /** Whether a consumer is behind: credit is withheld. */
  private behind = false;
  /** Output bytes taken while behind: credit given back once every consumer caught up. */
  private withheld = 0;

  constructor(
    private readonly sessionId: string,
    private readonly pty: Pick<PtyHost, 'credit'>,
    logger: Logger,
    private readonly metrics: Metrics,
    /** Bytes queued on each member's socket now. */
    private readonly backlogs: () => number[],
    private readonly pollMs: number,
  ) {
    this.gate = new FlowGate((behind) => {
      if (this.disposed) return;
      logger.log('debug', behind ? 'session behind: its credit withheld' : 'session caught up: its credit given back', { session: sessionId });
      this.behind = behind;
      if (!behind) this.giveBack();
    });
    this.screen = new Watermark(...marks(CONSUMER_MARKS.screen), (behind) => this.hold('screen', behind));
    this.log = new Watermark(...marks(CONSUMER_MARKS.log), (behind) => this.hold('log', behind));
  }

  /** The hub took `bytes` of the session's output: credit for them, now or once caught up. */
  taken(bytes: number): void {
    this.withheld += bytes;
    if (!this.behind) this.giveBack();
  }

  private giveBack(): void {
    if (this.withheld === 0) return;
    this.pty.credit(this.sessionId, this.withheld);
    this.withheld = 0;
  }

  private hold(cause: 'screen' | 'log' | 'clients', behind: boolean): void {
    if (behind) this.metrics.inc('flow_pauses_total', { cause });
    this.gate.hold(cause, behind);
  }

  /** Output is coming: when every member's socket is past the mark, withhold credit until one drains (or leaves). */
  checkClients(): void {
    if (this.clientsPoll || this.disposed || !this.allBehind(CONSUMER_MARKS.clients.high)) return;
    this.hold('clients', true);
    this.clientsPoll = setInterval(() => {
      if (this.allBehind(CONSUMER_MARKS.clients.low)) return;
      this.stopClients();
    }, this.pollMs);
  }

  /** The session is gone from the hub: what it withheld is given back (nothing will take it now). */
  dispose(): void {
    this.stopClients();
    this.disposed = true;
    this.behind = false;
    this.giveBack();
  }

  private allBehind(mark: number): boolean {
    const backlogs = this.backlogs();
    return backlogs.length > 0 && backlogs.every((b) => b > mark);
  }

  private stopClients(): void {
    if (!this.clientsPoll) return;
    clearInterval(this.clientsPoll);
    this.clientsPoll = null;
    this.hold('clients', false);
  }
}

/** What the hub wires per session. */
export interface FlowDeps {
  pty: Pick<PtyHost, 'credit' | 'pauseEvents' | 'resumeEvents'>;
  store: Store;
  screens: ScreenFactory;
  logger: Logger;
  metrics: Metrics;
  pollMs: number;
}

/** Every session's end of the credit loop, and the router-wide backstop over all of them. */
export class HubFlow {
  private readonly sessions = new Map<string, SessionFlow>();
  private readonly ledger = new LogLedger();
  private readonly allScreens: Watermark;
  private readonly allLog: Watermark;

  constructor(private readonly deps: FlowDeps) {
    const gate = new FlowGate((paused) => {
      deps.logger.log('debug', paused ? 'router behind on PTY output: reading paused' : 'router caught up: reading PTY output again');
      if (paused) deps.pty.pauseEvents();
      else deps.pty.resumeEvents();
    });
    const hold = (cause: 'all_screens' | 'all_log', behind: boolean) => {
      if (behind) deps.metrics.inc('flow_pauses_total', { cause });
      gate.hold(cause, behind);
    };
    this.allScreens = new Watermark(...marks(ROUTER_BACKSTOP_MARKS.screens), (behind) => hold('all_screens', behind));
    this.allLog = new Watermark(...marks(ROUTER_BACKSTOP_MARKS.log), (behind) => hold('all_log', behind));
  }

  /** Starts hearing the store's queue (each session's share, and all of it); returns the unsubscription. */
  watchStore(): () => void {
    const shares = this.deps.store.watchQueue(this.ledger.listener);
    const all = this.deps.store.watchQueue({ queued: (bytes) => this.allLog.add(bytes), settled: (bytes) => this.allLog.done(bytes) });
    return () => {
      shares();
      all();
    };
  }

  /**
   * A session's flow, made when the hub loads it: the emulator factory and store its LiveSession
   * uses (each counting against its own marks and the backstop), and its members' sockets.
   */
  session(sessionId: string, backlogs: () => number[]): { makeScreen: ScreenFactory; store: Store } {
    const flow = new SessionFlow(sessionId, this.deps.pty, this.deps.logger, this.deps.metrics, backlogs, this.deps.pollMs);
    this.sessions.get(sessionId)?.dispose();
    this.sessions.set(sessionId, flow);
    this.ledger.track(sessionId, flow.log);
    const screenBacklog = both(flow.screen, this.allScreens);
    const makeScreen: ScreenFactory = (cols, rows, _onParsed, onFailed): Screen => accountedScreen((onParsed) => this.deps.screens(cols, rows, onParsed, onFailed), screenBacklog);
    return { makeScreen, store: this.ledger.appending(this.deps.store) };
  }

  /** PTY output for the session arrived. */
  output(sessionId: string): void {
    this.sessions.get(sessionId)?.checkClients();
  }

  /** The hub took `bytes` of the session's output (a session with no flow here takes it as it comes). */
  taken(sessionId: string, bytes: number): void {
    const flow = this.sessions.get(sessionId);
    if (flow) flow.taken(bytes);
    else this.deps.pty.credit(sessionId, bytes);
  }

  /** The hub is shutting down: no gate polls on. */
  close(): void {
    for (const flow of this.sessions.values()) flow.dispose();
    this.sessions.clear();
  }

  /** The hub forgot the session (it ended and retired). */
  forget(sessionId: string): void {
    this.sessions.get(sessionId)?.dispose();
    this.sessions.delete(sessionId);
    this.ledger.forget(sessionId);
  }
}

function both(a: Backlog, b: Backlog): Backlog {
  return {
    add: (bytes) => {
      a.add(bytes);
      b.add(bytes);
    },
    done: (bytes) => {
      a.done(bytes);
      b.done(bytes);
    },
  };
}
