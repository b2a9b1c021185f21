// One session's live state: the sequence counter, members and their roles, the screen model, the process.
// Every broadcast frame is a log frame (DECISIONS §2): numbered, logged, then delivered.
import { BindingError, errorPayload } from '../errors.ts';
import { bytesToBase64, uuidv7 } from '../ids.ts';
import { encodeOutputFrame } from '../protocol/binary.ts';
import { PTY_FRAME_OP, ptyPayload, serverFrame, type PtyFrameKind } from '../protocol/frames.ts';
import type { JoinSession, Role } from '../protocol/pty-payloads.ts';
import { SNAPSHOT_FORMAT } from '../protocol/uris.ts';
import type { PtyExit, PtySessionInfo, SessionRecord } from '../ports.ts';
import { assignRole, changeRole, type RoleDecision } from './roles.ts';
import { KeyframeCadence } from './keyframe-cadence.ts';
import type { OutputBacklog } from './output-backlog.ts';
import { ScreenModel, type ScreenSnapshot } from './screen.ts';
import { buildSpawnSpec, checkJoinBackend, selectBackend, spawnError } from './session-host.ts';
import type { HubDeps } from './deps.ts';
import type { Member } from './member.ts';

export interface LogFrame {
  sequence: number;
  json: string;
  /** Raw bytes of an Output frame, for binary connections. */
  output?: Uint8Array;
}

export type CloseReason = 'normal' | 'killed' | 'timeout' | 'instance_terminated' | 'error';

export class LiveSession {
  readonly id: string;
  private record: SessionRecord;
  private sequence: number;
  private readonly members = new Map<string, Member>();
  private screen: ScreenModel | null = null;
  private starting: Promise<void> | null = null;
  private fresh = true;
  private killedOnPurpose = false;
  private readonly cadence: KeyframeCadence;
  /** While a periodic Keyframe is being cut, PTY events wait here so its anchor is exact. */
  private deferred: Array<() => void> | null = null;
  private framesSincePrune = 0;
  private pruning = false;
  /** Set while the PTY host is unreachable: the process may live on, but nothing reaches it. */
  private hostDown: string | null = null;
  private readonly backlog: OutputBacklog | undefined;

  /** `screen`: the model of a session this router did not start (rebuilt from the log), else null. */
  constructor(
    private readonly deps: HubDeps,
    record: SessionRecord,
    opts: { lastSequence: number; screen: ScreenModel | null; backlog?: OutputBacklog },
  ) {
    this.id = record.id;
    this.record = record;
    this.sequence = opts.lastSequence;
    this.screen = opts.screen;
    this.backlog = opts.backlog;
    this.cadence = new KeyframeCadence(deps.config.keyframeIntervalFrames, deps.config.keyframeIntervalSeconds, () => this.cutKeyframe());
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

  membership(): { controllers: Array<{ client_id: string; label?: string }>; observers: Array<{ client_id: string; label?: string }> } {
    const list = (role: Role) =>
      [...this.members.values()].filter((m) => m.role === role).map((m) => (m.label ? { client_id: m.clientId, label: m.label } : { client_id: m.clientId }));
    return { controllers: list('controller'), observers: list('observer') };
  }

  // ------------------------------------------------------------------ join / leave / roles

  /** The join's whole initial flush (DECISIONS §5). Throws BindingError, before anything is sent, if it cannot join. */
  async join(member: Member, req: JoinSession, replayFrom: number | null | undefined, requestId: string): Promise<void> {
    if (this.record.state === 'running') checkJoinBackend(this.deps.sessionHost, this.record, req);
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

    const joined = this.emit('MembershipChanged', this.membership());
    const screen = this.screen!.snapshot();
    const replay = replayFrom === null || replayFrom === undefined ? null : await this.replay(member, replayFrom, joined.sequence, requestId);
    const snap = await screen;
    member.release(replay ?? [joined], this.unicast('Keyframe', requestId, this.keyframePayload(snap), joined.sequence));
  }

  /** An ended session can still be read: the frames asked for (at least its Closed), its last screen, goodbye. */
  private async joinEnded(member: Member, replayFrom: number | null | undefined, requestId: string): Promise<void> {
    const last = this.sequence;
    member.role = 'observer';
    member.sendUnicast(this.roleFrame(member, { role: 'observer', downgraded: false, reason: 'the session has ended' }, requestId));
    let frames = replayFrom === null || replayFrom === undefined ? null : await this.replay(member, replayFrom, last, requestId);
    frames ??= (await this.deps.store.readLog(this.id, last - 1)).map((e) => ({ sequence: e.sequence, json: e.frame }));
    const keyframe = this.screen ? this.unicast('Keyframe', requestId, this.keyframePayload(await this.screen.snapshot()), last) : null;
    member.release(frames, keyframe);
    member.goodbye('session_closed');
  }

  /** Log frames in (replayFrom, upTo], or null after telling the member REPLAY_OUT_OF_RANGE (DECISIONS §4). */
  private async replay(member: Member, replayFrom: number, upTo: number, requestId: string): Promise<LogFrame[] | null> {
    const oldest = await this.deps.store.oldestSequence(this.id);
    if (replayFrom > upTo || (oldest !== null && replayFrom < oldest - 1)) {
      const message = `replay_from ${replayFrom} is outside the retained log (oldest retained sequence ${oldest ?? 'none'}, current ${upTo})`;
      const err = new BindingError('REPLAY_OUT_OF_RANGE', message, {
        metadata: { replay_from: String(replayFrom), oldest_retained_sequence: String(oldest ?? '') },
        extra: { oldest_retained_sequence: oldest, current_sequence: upTo },
      });
      member.sendUnicast(JSON.stringify(serverFrame('Error', errorPayload(err), upTo, this.deps.clock.now(), requestId)));
      return null;
    }
    const entries = await this.deps.store.readLog(this.id, replayFrom);
    return entries.filter((e) => e.sequence <= upTo).map((e) => ({ sequence: e.sequence, json: e.frame }));
  }

  leave(member: Member): void {
    member.dispose();
    if (!this.members.delete(member.clientId)) return;
    const frame = this.emit('MembershipChanged', this.membership());
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
    member.role = decision.role;
    member.sendUnicast(this.roleFrame(member, decision, requestId));
    if (changed) this.emit('MembershipChanged', this.membership());
  }

  async keyframeFor(member: Member, requestId: string): Promise<void> {
    if (!this.screen) throw new BindingError('INVALID_REQUEST', 'the session has no screen yet: join first');
    member.hold();
    const snap = await this.screen.snapshot();
    member.release([], this.unicast('Keyframe', requestId, this.keyframePayload(snap), member.lastSequence), snap.anchor);
  }

  /** A lagged member's socket drained: tell it what it lost, then repaint it (pty-extensions §5). */
  async recoverLagged(member: Member): Promise<void> {
    if (!this.screen || !this.members.has(member.clientId)) return;
    member.hold();
    const snap = await this.screen.snapshot();
    const lagged = this.unicast('Error', uuidv7(this.deps.clock.now()), {
      code: 'PTY_OUTPUT_LAGGED',
      message: `this connection fell behind; Output up to sequence ${snap.anchor} was dropped for it and the next frame is a Keyframe`,
    }, member.lastSequence);
    member.sendUnicast(lagged);
    member.release([], this.unicast('Keyframe', uuidv7(this.deps.clock.now()), this.keyframePayload(snap), member.lastSequence), snap.anchor);
  }

  // ------------------------------------------------------------------ input and resize

  input(member: Member, data: Uint8Array): void {
    this.requireController(member, 'send input');
    this.requireRunning();
    this.requireHost();
    this.deps.pty.write(this.id, data);
  }

  resize(member: Member, cols: number, rows: number): void {
    this.requireController(member, 'resize');
    this.requireRunning();
    this.requireHost();
    this.deps.pty.resize(this.id, cols, rows);
    this.inOrder(() => {
      const frame = this.emit('Resize', { cols, rows });
      this.screen?.resize(cols, rows, frame.sequence);
    });
    this.record = { ...this.record, cols, rows };
    void this.persist({ cols, rows });
  }

  // ------------------------------------------------------------------ PTY events

  onOutput(data: Uint8Array): void {
    this.inOrder(() => {
      const frame = this.emit('Output', { stream: 'stdout', data: bytesToBase64(data) }, data);
      this.screen?.write(data, frame.sequence);
      this.cadence.onOutput();
    });
  }

  onExit(exit: PtyExit): void {
    this.inOrder(() => {
      const signalled = exit.signal !== null && exit.signal !== 0;
      const reason: CloseReason = this.killedOnPurpose || signalled ? 'killed' : 'normal';
      this.end(reason, signalled ? null : exit.exitCode, signalled ? `signal ${exit.signal}` : undefined);
    });
  }

  /** The process is gone for us (the PTY host lost it, or the server is stopping with it). */
  terminate(reason: CloseReason, detail: string): void {
    if (this.record.state === 'running') this.end(reason, null, detail);
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
    this.screen ??= new ScreenModel(cols, rows, this.backlog);
    this.record = { ...this.record, backend: info.backend, sessionClass, state: 'running', cols, rows };
    void this.persist({ backend: info.backend, sessionClass, state: 'running', cols, rows });
  }

  kill(): void {
    if (this.record.state !== 'running') return;
    this.killedOnPurpose = true;
    // With the host unreachable the kill cannot be delivered: the session ends here, and a
    // host that comes back still running it is told to kill it (see SessionHub.adopt).
    if (this.hostDown) this.end('killed', null, 'deleted while the PTY host was unreachable');
    else this.deps.pty.kill(this.id, 'SIGHUP');
  }

  detach(member: Member): void {
    member.dispose();
    if (this.members.delete(member.clientId)) this.emit('MembershipChanged', this.membership());
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
    this.screen = new ScreenModel(cols, rows, this.backlog);
    try {
      await pty.spawn(spec);
    } catch (e) {
      this.screen = null;
      throw spawnError(e);
    }
    this.record = { ...this.record, backend, sessionClass, state: 'running', cwd: spec.cwd, argv: spec.argv, cols, rows };
    await this.persist({ backend, sessionClass, state: 'running', cwd: spec.cwd, argv: spec.argv, cols, rows });
  }

  private end(reason: CloseReason, exitCode: number | null, detail?: string): void {
    if (this.record.state === 'closed') return;
    this.cadence.stop();
    this.emit('Closed', detail ? { exit_code: exitCode, reason, detail } : { exit_code: exitCode, reason });
    const closedAt = new Date(this.deps.clock.now()).toISOString();
    this.record = { ...this.record, state: 'closed', exitCode, closeReason: reason, closedAt };
    void this.persist({ state: 'closed', exitCode, closeReason: reason, closedAt });
    for (const m of this.members.values()) m.goodbye('session_closed');
    this.members.clear();
  }

  /** Runs a PTY event now, or after the Keyframe being cut, so events keep their order. */
  private inOrder(event: () => void): void {
    if (this.deferred) this.deferred.push(event);
    else event();
  }

  /** A periodic Keyframe: a log frame whose anchor is the last Output before it. */
  private cutKeyframe(): void {
    const screen = this.screen;
    if (!screen || this.deferred || this.ended) return;
    const deferred: Array<() => void> = [];
    this.deferred = deferred;
    void screen.snapshot().then((snap) => {
      this.deferred = null;
      if (!this.ended) this.emit('Keyframe', this.keyframePayload(snap));
      for (let i = 0; i < deferred.length; i++) {
        // A deferred Output may spend the budget again: the rest waits for that Keyframe.
        if (this.deferred) {
          (this.deferred as Array<() => void>).push(...deferred.slice(i));
          return;
        }
        deferred[i]!();
      }
    });
  }

  private emit(kind: PtyFrameKind, fields: Record<string, unknown>, output?: Uint8Array): LogFrame {
    const now = this.deps.clock.now();
    const sequence = ++this.sequence;
    const json = JSON.stringify(serverFrame(PTY_FRAME_OP, ptyPayload(kind, fields), sequence, now));
    this.deps.store.appendLog({ sessionId: this.id, sequence, kind, createdAt: now, frame: json });
    if (++this.framesSincePrune >= this.pruneEvery) this.prune(now);
    const frame: LogFrame = output ? { sequence, json, output } : { sequence, json };
    let binary: Uint8Array | undefined;
    for (const m of this.members.values()) {
      if (output && m.binary) m.sendLog(frame, (binary ??= encodeOutputFrame(sequence, output)));
      else m.sendLog(frame);
    }
    return frame;
  }

  /** A frame for one connection: not logged, numbered with the latest log frame it may have seen. */
  private unicast(kind: PtyFrameKind, requestId: string, fields: Record<string, unknown>, sequence = this.sequence): string {
    return JSON.stringify(serverFrame(PTY_FRAME_OP, ptyPayload(kind, fields), sequence, this.deps.clock.now(), requestId));
  }

  private roleFrame(member: Member, d: RoleDecision, requestId: string): string {
    const fields: Record<string, unknown> = { role: d.role, client_id: member.clientId };
    if (d.downgraded) fields.downgraded = true;
    if (d.reason) fields.reason = d.reason;
    return this.unicast('RoleAssigned', requestId, fields);
  }

  private keyframePayload(snap: ScreenSnapshot): Record<string, unknown> {
    return {
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
    if (member.role !== 'controller') throw new BindingError('PERMISSION_DENIED', `observers cannot ${what}: request the controller role first`);
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
