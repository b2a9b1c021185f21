// Flow control per session (docs/architecture.md, "Router flow control"): a session whose consumers
// fall behind its PTY has that PTY paused at the host, alone, and every other session flows on.
// A session's consumers are its emulator (bytes not parsed yet), its share of the log writer's
// queue (bytes not committed yet, log-ledger.ts) and its members' sockets, once every one of them
// is behind: a member that keeps up is served, and a slow one beside it lags instead
// (docs/protocol.md §6.4). Global marks, far above a session's, stay as a backstop for many
// sessions at once: past them every PTY pauses.
import type { Metrics } from '../metrics.ts';
import type { Logger, PtyHost, Screen, ScreenFactory, Store } from '../ports.ts';
import { accountedScreen, FlowGate, Watermark } from './flow-control.ts';
import { LogLedger, type Backlog } from './log-ledger.ts';

/** Per session: unparsed emulator bytes, and queued log bytes (high, low). */
const SCREEN_MARKS = [8 * 1024 * 1024, 1024 * 1024] as const;
const LOG_MARKS = [4 * 1024 * 1024, 1024 * 1024] as const;
/** Per session: bytes queued on every member's socket (high, low), well under the lag mark (16 MiB). */
const CLIENT_MARKS = [1024 * 1024, 256 * 1024] as const;
/** All sessions together (the backstop): emulators, and the log under the store's 64 MiB cap. */
const ALL_SCREENS_MARKS = [32 * 1024 * 1024, 8 * 1024 * 1024] as const;
const ALL_LOG_MARKS = [32 * 1024 * 1024, 16 * 1024 * 1024] as const;

/** One session's gate. */
class SessionFlow {
  private readonly gate: FlowGate;
  readonly screen: Watermark;
  readonly log: Watermark;
  private clientsPoll: ReturnType<typeof setInterval> | null = null;
  private disposed = false;
  /** Whether this gate has the host hold the PTY now. */
  private paused = false;

  constructor(
    private readonly sessionId: string,
    private readonly pty: Pick<PtyHost, 'pauseSession'>,
    logger: Logger,
    private readonly metrics: Metrics,
    /** Bytes queued on each member's socket now. */
    private readonly backlogs: () => number[],
    private readonly pollMs: number,
  ) {
    this.gate = new FlowGate((paused) => {
      if (this.disposed) return;
      logger.log('debug', paused ? 'session behind: its PTY output paused' : 'session caught up: its PTY output resumed', { session: sessionId });
      this.paused = paused;
      pty.pauseSession(sessionId, paused);
    });
    this.screen = new Watermark(...SCREEN_MARKS, (behind) => this.hold('screen', behind));
    this.log = new Watermark(...LOG_MARKS, (behind) => this.hold('log', behind));
  }

  private hold(cause: 'screen' | 'log' | 'clients', behind: boolean): void {
    if (behind) this.metrics.inc('flow_pauses_total', { cause });
    this.gate.hold(cause, behind);
  }

  /** Output is coming: when every member's socket is past the mark, hold the PTY until one drains (or leaves). */
  checkClients(): void {
    if (this.clientsPoll || this.disposed || !this.allBehind(CLIENT_MARKS[0])) return;
    this.hold('clients', true);
    this.clientsPoll = setInterval(() => {
      if (this.allBehind(CLIENT_MARKS[1])) return;
      this.stopClients();
    }, this.pollMs);
  }

  /** The session is gone from the hub: its hold goes too (the router re-sends holds to a new host). */
  dispose(): void {
    this.stopClients();
    this.disposed = true;
    if (this.paused) this.pty.pauseSession(this.sessionId, false);
    this.paused = false;
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
  pty: Pick<PtyHost, 'pauseSession' | 'pauseEvents' | 'resumeEvents'>;
  store: Store;
  screens: ScreenFactory;
  logger: Logger;
  metrics: Metrics;
  pollMs: number;
}

/** Every session's gate, and the backstop over all of them. */
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
    this.allScreens = new Watermark(...ALL_SCREENS_MARKS, (behind) => hold('all_screens', behind));
    this.allLog = new Watermark(...ALL_LOG_MARKS, (behind) => hold('all_log', behind));
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
