// One session, put together from the parts that each own their state: the log (numbering,
// retention, replay reads), the membership (roles, capacity), the lifecycle (the process and its
// record), the screen (keyframes). This class routes the verbs and PTY events between them; every
// log frame goes through `emit` (docs/protocol.md §3): numbered and logged, then delivered.
import { BindingError, PtyError } from '../protocol/errors.ts';
import type { JoinSession, Role } from '../protocol/pty-payloads.ts';
import type { MembershipLists, TaskStatusUpdatePayload } from '../protocol/server-payloads.ts';
import type { LogLoss, SessionRecord } from '../ports/store.ts';
import type { PtyExit, PtySessionInfo } from '../ports/pty-host.ts';
import type { ScreenFactory } from '../ports/screen.ts';
import { LOG_OUTPUT_FRAME_BYTES } from '../core/flow-budget.ts';
import type { HubDeps } from './deps.ts';
import { finishBehind, join, type FlushContext } from './flushes.ts';
import { Lifecycle, type Ending } from './lifecycle.ts';
import { hostDownError, hostLinkedNotice, type HostDown } from './host-notices.ts';
import type { Member } from './member.ts';
import { Membership } from './membership.ts';
import { lossError } from './log-loss.ts';
import { PtyEventQueue } from './pty-events.ts';
import { detach, leave, requestRole, type RosterContext } from './roster.ts';
import { SessionLog, type LogPages, type Numbering } from './session-log.ts';
import { SessionScreen } from '../screen/session-screen.ts';
import { SessionStream } from './session-stream.ts';
import { processStarter } from './process-start.ts';
import { joinSize, SizeAsks, type Size } from './size-policy.ts';
import type { AgentPresence, CloseReason, LogFrame, LogSink, Session, SessionObserver } from './types.ts';


export class LiveSession implements Session, FlushContext, RosterContext {
  readonly id: string;
  readonly log: SessionLog;
  readonly members: Membership;
  readonly lifecycle: Lifecycle;
  readonly screen: SessionScreen;
  /** Numbers skipped after crashes and frames the store gave up on (docs/protocol.md §3.4). */
  private skipped: number;
  private readonly stream: SessionStream;
  private readonly events: PtyEventQueue;
  private readonly retire: () => void;
  /** Each controller's latest size (size-policy.ts). */
  private readonly sizes = new SizeAsks();
  /** The size last sent to the PTY host and not answered yet, with how many are out. */
  private resizing: { size: Size; out: number } | null = null;

  /**
   * `retire`: the session has ended, everything about it is stored and nobody is joining it: the
   * hub forgets it (a later join loads it from the store, as after a restart).
   */
  constructor(
    readonly deps: HubDeps,
    record: SessionRecord,
    opts: {
      numbering: Numbering;
      skipped?: number;
      makeScreen: ScreenFactory;
      retire: (s: LiveSession) => void;
      /** The session's PTY host events up to `n` are logged (docs/protocol.md §3.4). */
      handled?: (s: LiveSession, n: number) => void;
      /** `bytes` more of the session's output are taken: the credit loop's credit (docs/architecture.md). */
      taken?: (s: LiveSession, bytes: number) => void;
    },
  ) {
    this.id = record.id;
    this.skipped = opts.skipped ?? 0;
    this.log = new SessionLog(record.id, deps, opts.numbering);
    this.members = new Membership(deps.config);
    this.events = new PtyEventQueue(
      (output, n) => this.stream.output(output, n === undefined || deps.pty.epoch === null ? undefined : { epoch: deps.pty.epoch, n }),
      LOG_OUTPUT_FRAME_BYTES,
      (n) => opts.handled?.(this, n),
      (bytes) => opts.taken?.(this, bytes),
    );
    this.screen = new SessionScreen(record.id, deps, opts.makeScreen, {
      hold: () => this.events.hold(),
      release: () => this.events.release(),
      record: () => this.lifecycle.record,
      logged: (snapshot) => {
        if (!this.lifecycle.ended) this.stream.emit({ kind: 'Keyframe', snapshot });
      },
    });
    this.lifecycle = new Lifecycle(record, deps, {
      signal: () => deps.pty.kill(this.id, 'SIGHUP'),
      stored: () => this.retireIfIdle(),
    });
    this.stream = new SessionStream(this, deps.metrics, (member, closed, goodbye) => void finishBehind(this, member, closed, goodbye));
    this.retire = () => opts.retire(this);
  }

  get skippedSequences(): number {
    return this.skipped;
  }

  get currentSequence(): number {
    return this.log.current;
  }

  get state(): SessionRecord['state'] {
    return this.lifecycle.state;
  }

  get latestRecord(): Readonly<SessionRecord> {
    return this.lifecycle.record;
  }

  get ending(): boolean {
    return this.lifecycle.ending;
  }

  get argv(): readonly string[] | null {
    return this.lifecycle.record.argv;
  }

  observe(observer: SessionObserver): void {
    this.stream.observe(observer);
  }

  async ensureRunning(): Promise<void> {
    if (this.lifecycle.ended) throw new BindingError('INVALID_REQUEST', `session ${this.id} has ended`, { metadata: { reason: 'session.closed' } });
    await this.lifecycle.ensureStarted({ role: 'observer' }, false, processStarter(this));
  }

  type(data: Uint8Array): void {
    this.lifecycle.requireRunning();
    this.deps.pty.write(this.id, data);
  }

  membership(): MembershipLists {
    return this.members.lists();
  }

  showAgents(agents: readonly AgentPresence[]): void {
    // Once the process has ended, Closed follows: the members hear nothing more about who works in it.
    if (this.members.setAgents(agents) && !this.lifecycle.ended) this.membershipChanged();
  }

  replayRange(replayFrom: number, upTo: number): Promise<LogPages | BindingError> {
    return this.log.range(replayFrom, upTo);
  }

  emitTaskUpdate(update: TaskStatusUpdatePayload, sinks: Iterable<LogSink>, serviceParameters?: Record<string, unknown>): LogFrame {
    const to = [...sinks];
    return this.log.append({ kind: 'TaskStatusUpdate', update, serviceParameters }, (frame) => {
      for (const s of to) s.sendLog(frame);
    });
  }

  // The member verbs (attachment.ts calls flushes.ts itself for keyframes and lag recovery).

  /** The join's whole initial flush. Throws BindingError, before anything is sent, if it cannot join. */
  join(member: Member, req: JoinSession, replayFrom: number | null | undefined, requestId: string): Promise<void> {
    // Remembered, never applied at the join: only the first controller's size starts the process
    // (docs/protocol.md §5.4); the others' count once the size in force leaves (§5.5).
    const size = joinSize(req);
    if (size && !this.lifecycle.ended) this.sizes.ask(member.clientId, size);
    return join(this, member, req, replayFrom, requestId).then(
      () => {
        // Joined while its remote host's link is down: it hears so now, as the members before it did.
        const p = this.lifecycle.phase;
        if (p.state === 'running' && p.hostDown?.host !== undefined && this.members.has(member)) {
          member.tell({ kind: 'Error', error: hostDownError(p.hostDown), sequence: member.lastSequence });
        }
      },
      (e: unknown) => {
        if (!this.members.has(member)) this.sizes.forget(member.clientId);
        throw e;
      },
    );
  }

  leave(member: Member): void {
    leave(this, member);
    this.left(member);
  }

  detach(member: Member): void {
    detach(this, member);
    this.left(member);
  }

  requestRole(member: Member, role: Role, requestId: string): void {
    requestRole(this, member, role, requestId);
    if (member.role !== 'controller') this.refit();
  }

  /** `requestId`: the frame that carried it, echoed by a PTY_WRITE_FAILED the host may report later (docs/protocol.md §7.4). */
  input(member: Member, data: Uint8Array, requestId?: string): void {
    this.requireController(member, 'send input');
    this.deps.pty.write(this.id, data, (message) => {
      const err = new PtyError('PTY_WRITE_FAILED', message);
      if (this.members.has(member)) member.tell({ kind: 'PtyError', error: err, sequence: member.lastSequence, id: requestId });
    });
    this.stream.input(data, member.clientId);
  }

  /** Resize is broadcast only once the host applied it; otherwise only the requester hears PTY_RESIZE_FAILED. */
  resize(member: Member, cols: number, rows: number): Promise<void> {
    this.requireController(member, 'resize');
    this.sizes.ask(member.clientId, { cols, rows });
    return this.applySize({ cols, rows });
  }

  /** The PTY gets `size`; the Resize is broadcast once the host applied it, else the promise rejects with PTY_RESIZE_FAILED. */
  private applySize({ cols, rows }: Size): Promise<void> {
    this.resizing = { size: { cols, rows }, out: (this.resizing?.out ?? 0) + 1 };
    return new Promise((resolve, reject) => {
      this.deps.pty.resize(this.id, cols, rows, (error) => {
        if (this.resizing && --this.resizing.out === 0) this.resizing = null;
        if (error !== undefined) {
          reject(new PtyError('PTY_RESIZE_FAILED', `the terminal was not resized to ${cols}x${rows}: ${error}`));
          return;
        }
        // Queued as the answer is read: behind the output before it, ahead of the redraw after it.
        if (!this.lifecycle.ended) {
          this.events.event(() => this.screen.resize(cols, rows, this.stream.emit({ kind: 'Resize', cols, rows }).sequence));
          this.lifecycle.resized(cols, rows);
        }
        resolve();
      });
    });
  }

  /** A controller is gone (left, disconnected, now observes): the latest ask of those still controlling is applied (size-policy.ts). */
  private refit(): void {
    if (this.lifecycle.ended || this.state !== 'running') return;
    const controllers = [...this.members.all()].filter((m) => m.role === 'controller').map((m) => m.clientId);
    const wanted = this.sizes.latest(controllers);
    const now = this.resizing?.size ?? this.lifecycle.record;
    if (!wanted || (wanted.cols === now.cols && wanted.rows === now.rows)) return;
    try {
      this.lifecycle.requireHost();
    } catch {
      return;
    }
    this.applySize(wanted).catch((e: unknown) => {
      this.deps.logger.log('warn', 'the session was not refitted to its remaining controllers', { session: this.id, cols: wanted.cols, rows: wanted.rows, error: e });
    });
  }

  private left(member: Member): void {
    this.stream.left(member.clientId);
    this.sizes.forget(member.clientId);
    if (member.role === 'controller') this.refit();
  }

  // PTY host events.

  onOutput(data: Uint8Array, n?: number): void {
    this.events.output(data, n);
  }

  onExit(exit: PtyExit, n?: number): void {
    this.events.event(() => this.stream.end(this.lifecycle.exited(exit)), n);
  }

  /** The process could not start (process-start.ts): the session is over. */
  end(ending: Ending): void {
    this.stream.end(ending);
  }

  /** Ends the session here; its members get `Closed`, then `binding_goodbye` with `goodbye` (the server's own stop says `server_shutdown`). */
  terminate(reason: CloseReason, detail: string, goodbye = 'session_closed'): void {
    if (this.state !== 'running') return;
    this.events.drain();
    this.stream.end({ reason, exitCode: null, detail }, goodbye);
  }

  /**
   * The PTY host is unreachable (`host`: the remote one whose link is down): every member hears it
   * now; the session waits for `adopted` or `terminate`.
   */
  hostLost(message: string, host?: string): void {
    const down: HostDown = { message, host };
    if (!this.lifecycle.hostLost(down)) return;
    const err = hostDownError(down);
    this.members.tellEach((m) => ({ kind: 'Error', error: err, sequence: m.lastSequence }));
  }

  /**
   * The PTY host runs this session: after a router restart, or once a lost host is back. Members
   * that heard a remote host was unreachable hear it is back (docs/protocol.md §7.3).
   */
  adopted(info: PtySessionInfo): void {
    const sessionClass = this.deps.sessionHost.backends[info.backend] ?? this.lifecycle.record.sessionClass;
    const { started, back } = this.lifecycle.adopted(info, sessionClass);
    if (started) this.screen.ensure(this.lifecycle.record.cols, this.lifecycle.record.rows);
    if (back?.host === undefined) return;
    const err = hostLinkedNotice(back.host);
    this.members.tellEach((m) => ({ kind: 'Error', error: err, sequence: m.lastSequence }));
  }

  /** The store gave up on some of this session's log frames: every member already got them live, but a replay will skip them. */
  logLost(loss: LogLoss): void {
    this.skipped += loss.frames;
    const err = lossError(loss);
    this.members.tellEach((m) => ({ kind: 'Error', error: err, sequence: m.lastSequence }));
  }

  /**
   * Ends the session on purpose (REST DELETE): a running process gets SIGHUP and ends as `killed`;
   * one never started is ended at once and can no longer be started by a join.
   */
  kill(): 'closing' | 'closed' | null {
    const act = this.lifecycle.kill();
    if (!act) return null;
    if (act.do === 'end') {
      this.stream.end({ reason: 'killed', exitCode: null, detail: act.detail });
      return 'closed';
    }
    if (act.do === 'signal') this.deps.pty.kill(this.id, 'SIGHUP');
    return 'closing';
  }

  membershipChanged(): LogFrame {
    return this.stream.emit({ kind: 'MembershipChanged', members: this.members.lists() });
  }

  /**
   * After a crash that may have lost frames (docs/protocol.md §3.4): the numbers up to `ceiling`
   * are skipped, said in the log and the record, and the next frame is a Keyframe of the screen
   * as rebuilt from the log.
   */
  async declareHole(stored: number, ceiling: number): Promise<void> {
    const skipped = ceiling - stored;
    this.deps.logger.log('warn', 'sequence numbers skipped: the router before this one stopped without storing every frame it may have sent', {
      session: this.id,
      first: stored + 1,
      last: ceiling,
      skipped,
    });
    await this.deps.store.skipSequences(this.id, ceiling, skipped);
    const pending = this.screen.snapshot('join');
    if (pending) this.stream.emit({ kind: 'Keyframe', snapshot: await pending });
  }

  /** An ended session nobody is joining keeps nothing: its screen goes, and the hub forgets it. */
  retireIfIdle(): void {
    if (!this.lifecycle.idle || this.members.size > 0) return;
    this.screen.dispose();
    this.retire();
  }

  /** Throws unless `member` controls a running session whose host is reachable. */
  requireController(member: Member, what: string): void {
    this.members.requireController(member, what);
    this.lifecycle.requireRunning();
    this.lifecycle.requireHost();
  }
}
