// One session's live state: the sequence counter, members and their roles, the screen model, the process.
// Every broadcast frame is a log frame (DECISIONS §2): numbered, logged, then delivered.
import { BindingError, errorPayload } from '../errors.ts';
import { bytesToBase64, uuidv7 } from '../ids.ts';
import { encodeOutputFrame } from '../protocol/binary.ts';
import { PTY_FRAME_OP, ptyFrameJson, serverFrame } from '../protocol/frames.ts';
import type { JoinSession, Role } from '../protocol/pty-payloads.ts';
import type { KeyframePayload, MembershipLists, PtyFramePayload, TaskStatusUpdatePayload } from '../protocol/server-payloads.ts';
import { SNAPSHOT_FORMAT } from '../protocol/uris.ts';
import type { LogEntry, LogLoss, PtyExit, PtySessionInfo, Screen, ScreenFactory, ScreenSnapshot, SessionRecord } from '../ports.ts';
import { assignRole, changeRole, type RoleDecision } from './roles.ts';
import { KeyframeCadence } from './keyframe-cadence.ts';
import { PtyEventQueue } from './pty-events.ts';
import { rebuildScreen } from './screen-rebuild.ts';
import { checkJoinSpec } from './join-spec.ts';
import { buildSpawnSpec, checkJoinBackend, selectBackend, spawnError } from './session-host.ts';
import type { HubDeps } from './deps.ts';
import type { Member } from './member.ts';
import type { CloseReason, LogFrame, LogSink, Session, SessionObserver } from './types.ts';

/** Output coalesced in one event-loop turn is cut into frames of at most this size. */
const MAX_OUTPUT_FRAME_BYTES = 64 * 1024;

export class LiveSession implements Session {
  readonly id: string;
  private record: SessionRecord;
  private sequence: number;
  private readonly members = new Map<string, Member>();
  private screen: Screen | null = null;
  private starting: Promise<void> | null = null;
  private fresh = true;
  private killedOnPurpose = false;
  private readonly cadence: KeyframeCadence;
  private readonly events: PtyEventQueue;
  private cutting = false;
  private framesSincePrune = 0;
  private pruning = false;
  private readonly observers = new Set<SessionObserver>();
  /** Set while the PTY host is unreachable: the process may live on, but nothing reaches it. */
  private hostDown: string | null = null;
  private readonly makeScreen: ScreenFactory;
  /** Joins of the ended session still cutting their flush: its screen stays until they are done. */
  private endedJoins = 0;
  /** The store holds the record as closed: a reader of the store alone sees how it ended. */
  private closedStored: boolean;
  private readonly retire: (s: LiveSession) => void;

  /**
   * `screen`: the model of a session this router did not start (rebuilt from the log), else null.
   * `retire`: the session has ended, everything about it is stored and nobody is joining it: the
   * hub forgets it (a later join loads it from the store, as after a restart).
   */
  constructor(
    private readonly deps: HubDeps,
    record: SessionRecord,
    opts: { lastSequence: number; screen: Screen | null; makeScreen: ScreenFactory; retire: (s: LiveSession) => void },
  ) {
    this.id = record.id;
    this.record = record;
    this.sequence = opts.lastSequence;
    this.screen = opts.screen;
    this.makeScreen = opts.makeScreen;
    this.retire = opts.retire;
    this.closedStored = record.state === 'closed';
    this.cadence = new KeyframeCadence(deps.config.keyframeIntervalFrames, deps.config.keyframeIntervalSeconds, () => this.cutKeyframe());
    this.events = new PtyEventQueue((data) => this.emitOutput(data), MAX_OUTPUT_FRAME_BYTES);
  }

  get currentSequence(): number {
    return this.sequence;
  }

  private get ended(): boolean {
    return this.record.state === 'closed';
  }

  get state(): SessionRecord['state'] {
    return this.record.state;
  }

  /** The record as this router has it: ahead of the database, where its updates wait behind queued log commits. */
  get latestRecord(): Readonly<SessionRecord> {
    return this.record;
  }

  /** The argv the process was started with (null before it first started). */
  get argv(): readonly string[] | null {
    return this.record.argv;
  }

  /** Until the process ends, `observer` sees its output, controller input and end. */
  observe(observer: SessionObserver): void {
    this.observers.add(observer);
  }

  /** Starts the process with the session's own settings if nobody has yet (a join does the same). */
  async ensureRunning(): Promise<void> {
    if (this.ended) throw new BindingError('INVALID_REQUEST', `session ${this.id} has ended`, { metadata: { reason: 'session.closed' } });
    await this.ensureStarted({ role: 'observer' }, false);
  }

  /** Writes bytes to the PTY on behalf of the server (a task), not of a member. */
  type(data: Uint8Array): void {
    this.requireRunning();
    this.deps.pty.write(this.id, data);
  }

  membership(): MembershipLists {
    const list = (role: Role) =>
      [...this.members.values()].filter((m) => m.role === role).map((m) => (m.label ? { client_id: m.clientId, label: m.label } : { client_id: m.clientId }));
    return { controllers: list('controller'), observers: list('observer') };
  }

  // ------------------------------------------------------------------ join / leave / roles

  /** The join's whole initial flush (DECISIONS §5). Throws BindingError, before anything is sent, if it cannot join. */
  async join(member: Member, req: JoinSession, replayFrom: number | null | undefined, requestId: string): Promise<void> {
    if (this.record.state === 'running') checkJoinBackend(this.deps.sessionHost, this.record, req);
    checkJoinSpec(this.record, req, member.rights, this.deps.config);
    if (!this.ended) {
      const counts = this.counts();
      const decision = assignRole({
        requested: req.role,
        mayControl: member.mayControl,
        fresh: this.fresh,
        ...counts,
        maxControllers: this.deps.config.maxControllers,
        maxObservers: this.deps.config.maxObservers,
      });
      const before = this.sequence;
      await this.ensureStarted(req, decision.role === 'controller' && counts.controllers === 0);
      // ensureStarted may have seen the process end already.
      if (!this.ended) return this.joinLive(member, decision, replayFrom, requestId);
      // The process ended while it was starting: show this joiner everything it printed.
      replayFrom ??= before;
    }
    return this.joinEnded(member, replayFrom, requestId);
  }

  private async joinLive(member: Member, decision: RoleDecision, replayFrom: number | null | undefined, requestId: string): Promise<void> {
    this.fresh = false;
    member.role = decision.role;
    member.hold();
    this.members.set(member.clientId, member);
    member.sendUnicast(this.roleFrame(member, decision, requestId));
    this.audit(member, 'audit.attach', { role: decision.role, downgraded: decision.downgraded, reason: decision.reason, replay_from: replayFrom ?? undefined });

    const joined = this.emit({ kind: 'MembershipChanged', ...this.membership() });
    const screen = this.timedSnapshot('join', this.screen!);
    const replay = replayFrom === null || replayFrom === undefined ? null : await this.replay(member, replayFrom, joined.sequence, requestId);
    const snap = await screen;
    member.release(replay ?? [joined], this.unicast(this.keyframePayload(snap), requestId, joined.sequence));
  }

  /** An ended session can still be read: the frames asked for (at least its Closed), its last screen, goodbye. */
  private async joinEnded(member: Member, replayFrom: number | null | undefined, requestId: string): Promise<void> {
    const last = this.sequence;
    member.role = 'observer';
    member.sendUnicast(this.roleFrame(member, { role: 'observer', downgraded: false, reason: 'the session has ended' }, requestId));
    this.audit(member, 'audit.attach', { role: 'observer', session_state: 'closed', replay_from: replayFrom ?? undefined });
    this.endedJoins++;
    try {
      let frames = replayFrom === null || replayFrom === undefined ? null : await this.replay(member, replayFrom, last, requestId);
      frames ??= (await this.deps.store.readLog(this.id, last - 1)).map((e) => ({ sequence: e.sequence, json: e.frame }));
      // A retired session's last screen comes back from the log, for this join only.
      this.screen ??= await rebuildScreen(this.deps.store, this.record, this.makeScreen);
      const keyframe = this.unicast(this.keyframePayload(await this.timedSnapshot('join', this.screen)), requestId, last);
      member.release(frames, keyframe);
      member.goodbye('session_closed');
    } finally {
      this.endedJoins--;
      this.retireIfIdle();
    }
  }

  /** Log frames in (replayFrom, upTo], or null after telling the member REPLAY_OUT_OF_RANGE (DECISIONS §4). */
  private async replay(member: Member, replayFrom: number, upTo: number, requestId: string): Promise<LogFrame[] | null> {
    const entries = await this.replayRange(replayFrom, upTo);
    if (entries instanceof BindingError) {
      member.sendUnicast(JSON.stringify(serverFrame('Error', errorPayload(entries), upTo, this.deps.clock.now(), requestId)));
      return null;
    }
    const filter = this.deps.replayFilter;
    return entries.filter((e) => !filter || filter(this.id, member.clientId, e)).map((e) => ({ sequence: e.sequence, json: e.frame }));
  }

  /**
   * Log entries in (replayFrom, upTo] for a client catching up (a join, or SubscribeToTask), or the
   * REPLAY_OUT_OF_RANGE error to send it (DECISIONS §4).
   */
  async replayRange(replayFrom: number, upTo: number): Promise<LogEntry[] | BindingError> {
    const oldest = await this.deps.store.oldestSequence(this.id);
    const outOfRange = replayFrom > upTo || (oldest !== null && replayFrom < oldest - 1);
    this.deps.metrics.inc('replay_requests_total', { result: outOfRange ? 'out_of_range' : 'ok' });
    if (outOfRange) {
      const message = `replay_from ${replayFrom} is outside the retained log (oldest retained sequence ${oldest ?? 'none'}, current ${upTo})`;
      return new BindingError('REPLAY_OUT_OF_RANGE', message, {
        metadata: { replay_from: String(replayFrom), oldest_retained_sequence: String(oldest ?? '') },
        extra: { oldest_retained_sequence: oldest, current_sequence: upTo },
      });
    }
    return (await this.deps.store.readLog(this.id, replayFrom)).filter((e) => e.sequence <= upTo);
  }

  leave(member: Member): void {
    member.dispose();
    if (!this.members.delete(member.clientId)) return;
    this.audit(member, 'audit.detach', { role: member.role, cause: 'leave_session' });
    const frame = this.emit({ kind: 'MembershipChanged', ...this.membership() });
    member.sendLog(frame);
  }

  requestRole(member: Member, role: Role, requestId: string): void {
    const decision = changeRole(member.role, {
      requested: role,
      mayControl: member.mayControl,
      ...this.counts(member),
      maxControllers: this.deps.config.maxControllers,
      maxObservers: this.deps.config.maxObservers,
    });
    const changed = decision.role !== member.role;
    if (changed) this.audit(member, 'audit.role_change', { from: member.role, to: decision.role, downgraded: decision.downgraded, reason: decision.reason });
    member.role = decision.role;
    member.sendUnicast(this.roleFrame(member, decision, requestId));
    if (changed) this.emit({ kind: 'MembershipChanged', ...this.membership() });
  }

  async keyframeFor(member: Member, requestId: string): Promise<void> {
    if (!this.screen) throw new BindingError('INVALID_REQUEST', 'the session has no screen yet: join first');
    member.hold();
    const snap = await this.timedSnapshot('request', this.screen);
    member.release([], this.unicast(this.keyframePayload(snap), requestId, member.lastSequence), snap.anchor);
  }

  /** A lagged member's socket drained: tell it what it lost, then repaint it (pty-extensions §5). */
  async recoverLagged(member: Member): Promise<void> {
    if (!this.screen || !this.members.has(member.clientId)) return;
    member.hold();
    this.deps.metrics.inc('lagged_clients_total');
    const snap = await this.timedSnapshot('lag', this.screen);
    const lagged = this.unicast(
      {
        kind: 'Error',
        code: 'PTY_OUTPUT_LAGGED',
        message: `this connection fell behind; Output up to sequence ${snap.anchor} was dropped for it and the next frame is a Keyframe`,
      },
      uuidv7(this.deps.clock.now()),
      member.lastSequence,
    );
    member.sendUnicast(lagged);
    member.release([], this.unicast(this.keyframePayload(snap), uuidv7(this.deps.clock.now()), member.lastSequence), snap.anchor);
  }

  /**
   * The store gave up on some of this session's log frames: every member already got them live,
   * but a replay will skip them. The session goes on; details are in the server log.
   */
  logLost(loss: LogLoss): void {
    const frames = loss.first === loss.last ? `frame ${loss.first}` : `frames ${loss.first}-${loss.last}`;
    const why = loss.reason === 'queue_full' ? 'the database has been unavailable for too long' : 'writing to the database kept failing';
    const err = new BindingError('INTERNAL', `log ${frames} of this session could not be stored (${why}): a replay will skip ${loss.frames === 1 ? 'it' : 'them'}`, {
      metadata: { first_lost_sequence: String(loss.first), last_lost_sequence: String(loss.last) },
    });
    for (const m of this.members.values()) {
      m.sendUnicast(JSON.stringify(serverFrame('Error', errorPayload(err), m.lastSequence, this.deps.clock.now(), uuidv7(this.deps.clock.now()))));
    }
  }

  // ------------------------------------------------------------------ input and resize

  input(member: Member, data: Uint8Array): void {
    this.requireController(member, 'send input');
    this.requireRunning();
    this.requireHost();
    this.deps.pty.write(this.id, data);
    for (const o of this.observers) o.input?.(data);
  }

  resize(member: Member, cols: number, rows: number): void {
    this.requireController(member, 'resize');
    this.requireRunning();
    this.requireHost();
    this.deps.pty.resize(this.id, cols, rows);
    this.events.event(() => {
      const frame = this.emit({ kind: 'Resize', cols, rows });
      this.screen?.resize(cols, rows, frame.sequence);
    });
    this.record = { ...this.record, cols, rows };
    void this.persist({ cols, rows });
  }

  // ------------------------------------------------------------------ PTY events

  onOutput(data: Uint8Array): void {
    this.events.output(data);
  }

  onExit(exit: PtyExit): void {
    this.events.event(() => {
      const signalled = exit.signal !== null && exit.signal !== 0;
      const reason: CloseReason = this.killedOnPurpose || signalled ? 'killed' : 'normal';
      this.end(reason, signalled ? null : exit.exitCode, signalled ? `signal ${exit.signal}` : undefined);
    });
  }

  /** The process is gone for us (the PTY host lost it, or the server is stopping with it). */
  terminate(reason: CloseReason, detail: string): void {
    if (this.record.state !== 'running') return;
    this.events.drain();
    this.end(reason, null, detail);
  }

  /** The PTY host is unreachable: every member hears it now; the session waits for `adopted` or `terminate`. */
  hostLost(message: string): void {
    if (this.record.state !== 'running') return;
    this.hostDown = message;
    const payload = errorPayload(new BindingError('INTERNAL', message));
    const now = this.deps.clock.now();
    for (const m of this.members.values()) m.sendUnicast(JSON.stringify(serverFrame('Error', payload, m.lastSequence, now)));
  }

  /** The PTY host runs this session: after a router restart, or once a lost host is back. */
  adopted(info: PtySessionInfo): void {
    this.hostDown = null;
    if (this.record.state !== 'created') return;
    // Its start was not recorded before the router went down.
    const sessionClass = this.deps.sessionHost.backends[info.backend] ?? this.record.sessionClass;
    // A session listed only for its unreported exit has no size (0): keep the record's.
    const cols = info.cols || this.record.cols;
    const rows = info.rows || this.record.rows;
    this.screen ??= this.makeScreen(cols, rows);
    this.record = { ...this.record, backend: info.backend, sessionClass, state: 'running', cols, rows };
    void this.persist({ backend: info.backend, sessionClass, state: 'running', cols, rows });
  }

  /**
   * Ends the session on purpose (REST DELETE): a running process gets SIGHUP and ends as `killed`;
   * one never started is ended at once and can no longer be started by a join.
   * Returns what became of it, or null if it had already ended.
   */
  kill(): 'closing' | 'closed' | null {
    if (this.ended) return null;
    this.killedOnPurpose = true;
    if (this.record.state === 'created') {
      // A start under way sees killedOnPurpose once its process exists, and kills it (start()).
      if (this.starting) return 'closing';
      this.end('killed', null, 'deleted before it started');
      return 'closed';
    }
    // With the host unreachable the kill cannot be delivered: the session ends here, and a
    // host that comes back still running it is told to kill it (see SessionHub.adopt).
    if (this.hostDown) {
      this.end('killed', null, 'deleted while the PTY host was unreachable');
      return 'closed';
    }
    this.deps.pty.kill(this.id, 'SIGHUP');
    return 'closing';
  }

  detach(member: Member): void {
    member.dispose();
    if (!this.members.delete(member.clientId)) return;
    this.audit(member, 'audit.detach', { role: member.role, cause: 'disconnect' });
    this.emit({ kind: 'MembershipChanged', ...this.membership() });
  }

  // ------------------------------------------------------------------ internals

  private async ensureStarted(req: JoinSession, firstController: boolean): Promise<void> {
    if (this.record.state === 'running') return;
    this.starting ??= this.start(req, firstController).finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async start(req: JoinSession, firstController: boolean): Promise<void> {
    const { config, pty } = this.deps;
    const { backend, sessionClass } = selectBackend(this.deps.sessionHost, req.session_backend ?? req.backend ?? this.record.backend, req.session_class ?? this.record.sessionClass);
    const size = firstController ? (req.terminal_size ?? (req.cols && req.rows ? { cols: req.cols, rows: req.rows } : undefined)) : undefined;
    const cols = size?.cols ?? this.record.cols;
    const rows = size?.rows ?? this.record.rows;
    const spec = buildSpawnSpec({ ...this.record, backend }, req, cols, rows, { defaultShell: config.defaultShell, defaultCwd: config.defaultCwd, baseEnv: config.sessionBaseEnv });
    // The screen exists before the process does, so the first bytes it prints are folded in.
    this.screen = this.makeScreen(cols, rows);
    try {
      await pty.spawn(spec);
    } catch (e) {
      this.screen.dispose();
      this.screen = null;
      throw spawnError(e);
    }
    // The spec it started with is recorded whole (without the server's base environment): later
    // joins are checked against it (join-spec.ts) and REST shows what really runs.
    const env = { ...this.record.env, ...req.env };
    this.record = { ...this.record, backend, sessionClass, state: 'running', cwd: spec.cwd, argv: spec.argv, env, cols, rows };
    await this.persist({ backend, sessionClass, state: 'running', cwd: spec.cwd, argv: spec.argv, env, cols, rows });
    if (this.killedOnPurpose) pty.kill(this.id, 'SIGHUP');
  }

  private end(reason: CloseReason, exitCode: number | null, detail?: string): void {
    if (this.record.state === 'closed') return;
    this.cadence.stop();
    for (const o of this.observers) o.ended?.(exitCode, reason);
    this.observers.clear();
    this.emit(detail ? { kind: 'Closed', exit_code: exitCode, reason, detail } : { kind: 'Closed', exit_code: exitCode, reason });
    const closedAt = new Date(this.deps.clock.now()).toISOString();
    this.record = { ...this.record, state: 'closed', exitCode, closeReason: reason, closedAt };
    void this.persist({ state: 'closed', exitCode, closeReason: reason, closedAt }).then(() => {
      this.closedStored = true;
      this.retireIfIdle();
    });
    for (const m of this.members.values()) m.goodbye('session_closed');
    this.members.clear();
  }

  /** An ended session nobody is joining keeps nothing: its screen goes, and the hub forgets it. */
  private retireIfIdle(): void {
    if (!this.ended || !this.closedStored || this.endedJoins > 0 || this.members.size > 0) return;
    this.screen?.dispose();
    this.screen = null;
    this.retire(this);
  }

  private emitOutput(data: Uint8Array): void {
    if (this.ended) return;
    this.deps.metrics.inc('pty_output_bytes_total', {}, data.byteLength);
    const frame = this.emit({ kind: 'Output', stream: 'stdout', data: bytesToBase64(data) }, data);
    this.screen?.write(data, frame.sequence);
    this.cadence.onOutput();
  }

  /**
   * A periodic Keyframe, logged right where the cadence says. It holds PTY events only for the
   * emulator's answer, not until the emulator has caught up: its anchor is the last frame the
   * emulator had parsed, which may be older than the Output frames before it.
   */
  private cutKeyframe(): void {
    const screen = this.screen;
    if (!screen || this.cutting || this.ended) return;
    this.cutting = true;
    this.events.hold();
    this.timedSnapshot('periodic', screen, true).then(
      (snap) => {
        this.cutting = false;
        if (!this.ended) this.emit(this.keyframePayload(snap));
        this.events.release();
      },
      (e: unknown) => {
        this.cutting = false;
        this.deps.logger.log('error', 'keyframe failed', { session: this.id, error: String(e) });
        this.events.release();
      },
    );
  }

  private async timedSnapshot(occasion: string, screen: Screen, now = false): Promise<ScreenSnapshot> {
    const t0 = this.deps.clock.now();
    const snap = await (now ? screen.snapshotNow() : screen.snapshot());
    this.deps.metrics.inc('keyframes_total', { occasion });
    this.deps.metrics.observe('keyframe_build_seconds', (this.deps.clock.now() - t0) / 1000, { occasion });
    return snap;
  }

  /** A TaskStatusUpdate for its task's followers only (docs/protocol.md §8): numbered and logged like every other. */
  emitTaskUpdate(payload: TaskStatusUpdatePayload, sinks: Iterable<LogSink>, serviceParameters?: Record<string, unknown>): LogFrame {
    const envelope = serviceParameters ? { service_parameters: serviceParameters } : {};
    const frame = this.append('TaskStatusUpdate', (sequence, now) => ({ ...serverFrame('TaskStatusUpdate', payload, sequence, now), ...envelope }));
    for (const s of sinks) s.sendLog(frame);
    return frame;
  }

  /** Takes the next sequence number and writes the frame to the log. */
  private append(kind: string, build: (sequence: number, now: number) => unknown): LogFrame {
    const now = this.deps.clock.now();
    const sequence = ++this.sequence;
    const json = JSON.stringify(build(sequence, now));
    this.deps.store.appendLog({ sessionId: this.id, sequence, kind, createdAt: now, frame: json });
    if (++this.framesSincePrune >= this.pruneEvery) this.prune(now);
    return { sequence, json };
  }

  private emit(payload: PtyFramePayload, output?: Uint8Array): LogFrame {
    const logged = this.append(payload.kind, (sequence, now) => serverFrame(PTY_FRAME_OP, payload, sequence, now));
    const frame: LogFrame = output ? { ...logged, output } : logged;
    const sequence = frame.sequence;
    let binary: Uint8Array | undefined;
    for (const m of this.members.values()) {
      if (output && m.binary) m.sendLog(frame, (binary ??= encodeOutputFrame(sequence, output)));
      else m.sendLog(frame);
    }
    if (output) for (const o of this.observers) o.output?.(output);
    return frame;
  }

  /** A frame for one connection: not logged, numbered with the latest log frame it may have seen. */
  private unicast(payload: PtyFramePayload, requestId: string, sequence = this.sequence): string {
    return ptyFrameJson(payload, sequence, this.deps.clock.now(), requestId);
  }

  private roleFrame(member: Member, d: RoleDecision, requestId: string): string {
    return this.unicast(
      { kind: 'RoleAssigned', role: d.role, client_id: member.clientId, ...(d.downgraded ? { downgraded: true } : {}), ...(d.reason ? { reason: d.reason } : {}) },
      requestId,
    );
  }

  private keyframePayload(snap: ScreenSnapshot): KeyframePayload {
    return {
      kind: 'Keyframe',
      snapshot: bytesToBase64(new TextEncoder().encode(snap.snapshot)),
      snapshot_format: SNAPSHOT_FORMAT,
      snapshot_cols: snap.cols,
      snapshot_rows: snap.rows,
      anchor_sequence: snap.anchor,
    };
  }

  private counts(except?: Member): { controllers: number; observers: number } {
    let controllers = 0;
    let observers = 0;
    for (const m of this.members.values()) {
      if (m === except) continue;
      if (m.role === 'controller') controllers++;
      else observers++;
    }
    return { controllers, observers };
  }

  private requireController(member: Member, what: string): void {
    if (!this.members.has(member.clientId)) throw new BindingError('INVALID_REQUEST', `join the session (pty.join_session) before you ${what}`);
    if (!member.mayControl) throw new BindingError('PERMISSION_DENIED', `this connection's principal has only the pty:observe scope: it cannot ${what}`);
    if (member.role !== 'controller') throw new BindingError('PERMISSION_DENIED', `observers cannot ${what}: request the controller role first`);
  }

  /** One audit line; observers see everything typed and shown, so their attach is a disclosure event. */
  private audit(member: Member, msg: string, fields: Record<string, unknown>): void {
    const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    const becomesObserver = msg !== 'audit.detach' && (fields.to ?? fields.role) === 'observer';
    (member.audit ?? this.deps.logger).log('info', msg, { session: this.id, client_id: member.clientId, ...defined, ...(becomesObserver ? { disclosure: true } : {}) });
  }

  private requireRunning(): void {
    if (this.record.state !== 'running') throw new BindingError('INVALID_REQUEST', `session ${this.id} is not running`);
  }

  private requireHost(): void {
    if (this.hostDown) throw new BindingError('INTERNAL', `${this.hostDown}; try again shortly`);
  }

  /** Retention runs in the background, a few times per `replay_buffer_frames` frames logged. */
  private get pruneEvery(): number {
    return Math.max(16, Math.floor(this.deps.config.replayBufferFrames / 4));
  }

  private prune(now: number): void {
    if (this.pruning) return;
    this.framesSincePrune = 0;
    this.pruning = true;
    const { replayBufferFrames: keepFrames, replayRetentionSeconds: keepSeconds } = this.deps.config;
    this.deps.store
      .prune(this.id, { keepFrames, keepSeconds, now })
      .catch((e: unknown) => this.deps.logger.log('warn', 'log pruning failed', { session: this.id, error: String(e) }))
      .finally(() => {
        this.pruning = false;
      });
  }

  private async persist(patch: Parameters<HubDeps['store']['updateSession']>[1]): Promise<void> {
    try {
      await this.deps.store.updateSession(this.id, patch);
    } catch (e) {
      this.deps.logger.log('error', 'session update failed', { session: this.id, error: String(e) });
    }
  }
}
