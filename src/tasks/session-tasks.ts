// One session's tasks: the queue, the command running in the live terminal, who follows which
// task, and every state change numbered into the session log and written to the store (TaskRecord).
//
// Tasks of a session run one at a time, in arrival order; a command is typed only when the
// TerminalGate says the terminal is free.
import { BindingError, errorPayload } from '../protocol/errors.ts';
import type { OpContext, Session } from '../hub/types.ts';
import { uuidv7 } from '../core/ids.ts';
import type { Artifact, Task, TaskState, UserMessage } from '../protocol/a2a.ts';
import type { LogEntry } from '../protocol/logged-frames.ts';
import type { PushConfigRecord } from '../ports/push-store.ts';
import type { TaskPage, TaskStore } from '../ports/task-store.ts';
import { CommandCapture, commandLine, isInteractiveShell, newNonce } from './shell-command.ts';
import type { TaskConnection } from './task-connection.ts';
import { type TaskFollowers, updateOf } from './task-followers.ts';
import { TaskRecord } from './task-record.ts';
import type { Params, Run, TaskDeps } from './task-run.ts';
import { CLEAR_LINE, TerminalGate } from './terminal-gate.ts';
import { agentMessage, taskView, withStatus } from './task-objects.ts';
import { agentPresence, type TaskSender } from './agent-presence.ts';
import { keystrokes, planMessage } from './task-plan.ts';
import { terminalText } from './terminal-text.ts';

const CTRL_C = new Uint8Array([0x03]);

/**
 * Task metadata keys are camelCase, as A2A's JSON is; the snake_case spellings are kept beside
 * them for one release, for clients that read them (docs/tasks.md).
 */
const kindMeta = (kind: 'command' | 'input') => ({ taskKind: kind, task_kind: kind });
const exitMeta = (exitCode: number) => ({ exitCode, exit_code: exitCode });

export interface SubmitOptions {
  params: Params;
  sender: TaskSender;
  follower?: TaskConnection;
  accepted?: (task: Task) => void;
  push?: Omit<PushConfigRecord, 'taskId'>;
}

function pushFor(taskId: string, push: SubmitOptions['push']): PushConfigRecord[] | undefined {
  return push && [{ ...push, taskId }];
}

export class SessionTasks {
  private readonly runs = new Map<string, Run>();
  private readonly queue: Run[] = [];
  private running: Run | null = null;
  /** Every change made known: the log frame to followers, the store, the log line. */
  private readonly record: TaskRecord;
  private readonly followers: TaskFollowers;
  private closed: boolean;
  private readonly gate: TerminalGate;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  /** When the last unfinished task finished (ms); 0 before any did. */
  private lastFinished = 0;
  private interruptTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly session: Session,
    private readonly deps: TaskDeps,
  ) {
    this.closed = session.state === 'closed';
    this.gate = new TerminalGate(deps.limits);
    this.record = new TaskRecord(session, deps);
    this.followers = this.record.followers;
    session.observe({
      output: (data) => this.onOutput(data),
      input: (data, clientId) => this.onHumanInput(data, clientId),
      left: (clientId) => this.onHumanLeft(clientId),
      ended: (exitCode, reason) => this.onEnded(exitCode, reason),
    });
  }

  // ------------------------------------------------------------------ operations

  /**
   * A new task for the message, or the running task it continues; `accepted` runs once it is
   * stored, before any event. `push`: a push config (already checked) stored with the task's write,
   * so its webhook hears this state and every later one (docs/a2a.md, "Push notifications").
   */
  async submit(msg: UserMessage, o: SubmitOptions): Promise<Run> {
    if (msg.contextId !== undefined && msg.contextId !== this.session.id) {
      throw new BindingError('INVALID_REQUEST', `message.contextId ${JSON.stringify(msg.contextId)} is not this connection's session (${this.session.id})`);
    }
    if (msg.taskId !== undefined) return this.continueRun(msg.taskId, msg, o);
    if (this.runs.size >= this.deps.limits.maxPending) {
      throw new BindingError('RATE_LIMITED', `session ${this.session.id} already has ${this.runs.size} unfinished tasks: wait for some to finish or cancel them`);
    }
    await this.session.ensureRunning();
    const plan = planMessage(msg.parts, isInteractiveShell(this.session.argv));
    const now = this.deps.clock.now();
    const id = uuidv7(now);
    const message = { ...msg, taskId: id, contextId: this.session.id };
    const metadata = plan.kind === 'command' ? { ...kindMeta('command'), command: plan.command } : kindMeta('input');
    const task: Task = { id, contextId: this.session.id, status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date(now).toISOString() }, history: [message], metadata };
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const run: Run = { task, plan, params: o.params, sender: o.sender, done, resolveDone, capture: null, interruptTimer: null };
    await this.record.persist(run, { messages: [{ position: 0, message }], pushConfigs: pushFor(id, o.push) });
    this.runs.set(id, run);
    o.accepted?.(taskView(run.task));
    if (o.follower) this.followers.follow(id, o.follower);
    this.record.announce(run);
    this.record.log('task submitted', run);
    if (this.closed) this.finish(run, 'TASK_STATE_FAILED', 'the session ended before this task ran');
    else this.queue.push(run);
    this.pump();
    return run;
  }

  /** Null while a task is unfinished; else when the last one finished (0: none ever ran). */
  quietSince(): number | null {
    return this.runs.size > 0 ? null : this.lastFinished;
  }

  /** Resolves once the run is terminal and stored. */
  settled(run: Run): Promise<void> {
    return run.done;
  }

  async cancel(taskId: string): Promise<Task> {
    const run = this.runs.get(taskId);
    if (!run) {
      const task = await this.read(taskId);
      throw new BindingError('TASK_NOT_CANCELABLE', `task ${taskId} is already ${task.status.state}`, { metadata: { taskId } });
    }
    if (run === this.running) {
      this.interrupt();
      this.finish(run, 'TASK_STATE_CANCELED', 'canceled: Ctrl-C was sent to the terminal', {}, this.outputArtifact(run));
    } else {
      this.finish(run, 'TASK_STATE_CANCELED', 'canceled before it ran');
    }
    await run.done;
    return taskView(run.task);
  }

  /** The stored task, after every change made so far is committed. */
  async read(taskId: string, historyLength?: number): Promise<Task> {
    await this.record.flushed();
    const task = await this.deps.store.getTask(this.session.id, taskId, { historyLength, includeArtifacts: true });
    if (!task) throw new BindingError('TASK_NOT_FOUND', `task ${taskId} not found in session ${this.session.id}`, { metadata: { taskId } });
    return task;
  }

  /** A ListTasks page of this session, once every change made so far is committed. */
  async list(opts: Parameters<TaskStore['listTasks']>[1]): Promise<TaskPage> {
    await this.record.flushed();
    return this.deps.store.listTasks(this.session.id, opts);
  }

  /** SubscribeToTask: Accepted with the task as of `current_sequence`, then (with replay_from) its missed updates, then live ones. */
  async subscribe(ctx: OpContext, taskId: string): Promise<void> {
    const conn = this.followers.connection(ctx);
    const run = await this.unfinished(taskId);
    const replayFrom = ctx.frame.replay_from;
    const catchUp = replayFrom !== null && replayFrom !== undefined;
    if (catchUp) conn.hold();
    this.followers.follow(taskId, conn);
    const upTo = this.session.currentSequence;
    ctx.reply('SubscribeToTask.Accepted', { current_sequence: upTo, task: taskView(run.task) });
    if (!catchUp) return;
    try {
      const pages = await this.session.replayRange(replayFrom, upTo);
      if (pages instanceof BindingError) ctx.reply('Error', errorPayload(pages));
      // Read a page at a time: only the task's own updates are kept (docs/protocol.md §6.2).
      const updates: Array<{ sequence: number; json: string }> = [];
      if (!(pages instanceof BindingError)) for await (const page of pages) for (const e of page) if (updateOf(e) === taskId) updates.push({ sequence: e.sequence, json: e.frame });
      conn.release(updates);
    } catch (e) {
      conn.release([]);
      throw e;
    }
  }

  /**
   * SubscribeToTask for a follower that is not a connection of this session (an SSE stream of the
   * standard A2A bindings): the task as it is now; its updates follow through `conn`.
   */
  async watch(taskId: string, conn: TaskConnection): Promise<Task> {
    const run = await this.unfinished(taskId);
    this.followers.follow(taskId, conn);
    return taskView(run.task);
  }

  /** The follower outside this session's connections is gone (its HTTP client went away). */
  unwatch(conn: TaskConnection): void {
    this.followers.drop(conn);
  }

  /** Resolves once every task change made so far is committed. */
  flushed(): Promise<void> {
    return this.record.flushed();
  }

  async unsubscribe(ctx: OpContext, taskId: string): Promise<void> {
    if (!this.runs.has(taskId)) await this.read(taskId);
    this.followers.unfollow(taskId, ctx.clientId);
  }

  connection(ctx: OpContext): TaskConnection {
    return this.followers.connection(ctx);
  }

  mayReplay(clientId: string, entry: LogEntry): boolean {
    return this.followers.mayReplay(clientId, entry);
  }

  /** A task that can still be followed; a terminal one cannot (a2a-model.md, Operations). */
  private async unfinished(taskId: string): Promise<Run> {
    if (!this.runs.has(taskId)) await this.read(taskId);
    const run = this.runs.get(taskId);
    if (!run) throw new BindingError('UNSUPPORTED_OPERATION', `task ${taskId} is in a terminal state: there is nothing to subscribe to (use GetTask)`, { metadata: { taskId } });
    return run;
  }

  // ------------------------------------------------------------------ running

  private async continueRun(taskId: string, msg: UserMessage, o: SubmitOptions): Promise<Run> {
    if (!this.runs.has(taskId)) {
      const task = await this.read(taskId);
      throw new BindingError('UNSUPPORTED_OPERATION', `task ${taskId} is ${task.status.state}: a finished task takes no more messages (omit taskId to start a new one)`, { metadata: { taskId } });
    }
    const run = this.runs.get(taskId)!;
    if (run.task.status.state !== 'TASK_STATE_WORKING') {
      throw new BindingError('INVALID_REQUEST', `task ${taskId} is still queued: it takes input once it runs (or cancel it)`, { metadata: { taskId } });
    }
    const bytes = keystrokes(msg.parts);
    const message = { ...msg, contextId: this.session.id };
    const position = run.task.history?.length ?? 0;
    run.task = withStatus({ ...run.task, history: [...(run.task.history ?? []), message] }, 'TASK_STATE_WORKING', this.deps.clock.now());
    run.params = o.params;
    await this.record.persist(run, { messages: [{ position, message }], pushConfigs: pushFor(taskId, o.push) });
    if (!this.runs.has(taskId)) {
      throw new BindingError('UNSUPPORTED_OPERATION', `task ${taskId} finished before this message could be typed into it`, { metadata: { taskId } });
    }
    o.accepted?.(taskView(run.task));
    if (o.follower) this.followers.follow(taskId, o.follower);
    this.record.announce(run);
    // Typed last: what it sets off (the command finishing) comes after the update announcing it.
    this.session.type(bytes);
    return run;
  }

  /** Runs the next task if the terminal is free, then shows who works in the session now. */
  private pump(): void {
    this.advance();
    this.showAgents();
  }

  private advance(): void {
    if (this.running || this.closed || this.queue.length === 0) return;
    const next = this.queue[0]!;
    const now = this.deps.clock.now();
    // Keystrokes do not wait for the humans, but they too wait out a cancel's Ctrl-Cs (which would discard them).
    const wait = next.plan.kind === 'command' ? this.gate.busyFor(now, this.session.latestRecord.backend !== 'native') : this.gate.settlingFor(now);
    if (wait !== 0) {
      if (wait > 0) this.retryIn(wait);
      return;
    }
    this.queue.shift();
    this.start(next);
  }

  private showAgents(): void {
    const next = this.closed ? undefined : this.queue[0];
    const now = this.deps.clock.now();
    const multiplexed = this.session.latestRecord.backend !== 'native';
    const waitingFor = (run: Run) =>
      run.plan.kind === 'command' ? this.gate.waitingFor(now, multiplexed) : this.gate.settlingFor(now) > 0 ? 'waiting for the terminal to settle after Ctrl-C' : null;
    this.session.showAgents(agentPresence({ runs: this.runs.values(), running: this.running, next: next ? { sender: next.sender, waitingFor: waitingFor(next) } : null }));
  }

  /**
   * Ctrl-C to the running command, twice: the first may land in the moment the shell has forked the
   * command but not yet given it the terminal, and then reaches the shell instead; at the prompt a
   * Ctrl-C only prints a fresh prompt.
   */
  private interrupt(): void {
    this.typeOrLog(CTRL_C);
    const { secondInterruptMs } = this.deps.limits;
    this.gate.interrupted(this.deps.clock.now() + secondInterruptMs);
    if (this.interruptTimer) clearTimeout(this.interruptTimer);
    this.interruptTimer = setTimeout(() => {
      this.interruptTimer = null;
      if (!this.closed) this.typeOrLog(CTRL_C);
    }, secondInterruptMs);
  }

  private retryIn(ms: number): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.pump();
    }, ms);
  }

  private start(run: Run): void {
    run.task = withStatus(run.task, 'TASK_STATE_WORKING', this.deps.clock.now());
    this.record.announce(run);
    void this.record.persist(run);
    if (run.plan.kind === 'input') {
      const typed = this.typeOrLog(run.plan.bytes);
      if (typed) this.finish(run, 'TASK_STATE_COMPLETED', `typed ${run.plan.bytes.length} bytes into the terminal`);
      else this.finish(run, 'TASK_STATE_FAILED', 'the terminal did not take the input (the session is not running)');
      return;
    }
    const nonce = newNonce();
    run.capture = new CommandCapture(nonce, this.deps.limits.maxOutputBytes);
    this.running = run;
    this.record.log('task started', run);
    // A line its humans left half-written would run as the start of the command: cleared first.
    const clear = this.gate.takeAbandonedLine() ? CLEAR_LINE : '';
    if (!this.typeOrLog(new TextEncoder().encode(clear + commandLine(run.plan.command, nonce, this.session.latestRecord.backend)))) {
      this.finish(run, 'TASK_STATE_FAILED', 'the terminal did not take the command (the session is not running)');
    }
  }

  private onOutput(data: Uint8Array): void {
    this.gate.printed(data);
    const run = this.running;
    const end = run?.capture?.feed(data);
    if (run && end) {
      const { exitCode } = end;
      this.finish(run, exitCode === 0 ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_FAILED', `exit status ${exitCode}`, exitMeta(exitCode), this.outputArtifact(run));
    } else if (!run && this.queue.length > 0) {
      this.pump();
    }
  }

  private onHumanInput(data: Uint8Array, clientId: string): void {
    const interrupt = this.gate.humanTyped(clientId, data, this.deps.clock.now());
    const run = this.running;
    if (run && !run.interruptTimer && interrupt) {
      // The shell abandons the rest of the typed group when its command dies of the signal, so the
      // end mark may never come; if it does come (the command handled the signal) it wins.
      run.interruptTimer = setTimeout(() => {
        run.interruptTimer = null;
        if (this.running === run) this.finish(run, 'TASK_STATE_CANCELED', 'interrupted from the terminal', {}, this.outputArtifact(run));
      }, this.deps.limits.interruptGraceMs);
    }
    if (this.queue.length > 0 && !this.running) this.retryIn(this.deps.limits.humanQuietMs);
  }

  /** A human who left a line half-written no longer holds the queue: the next command may run. */
  private onHumanLeft(clientId: string): void {
    this.gate.humanLeft(clientId);
    if (this.queue.length > 0 && !this.running) this.pump();
  }

  private onEnded(exitCode: number | null, reason: string): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.interruptTimer) clearTimeout(this.interruptTimer);
    this.retryTimer = null;
    this.interruptTimer = null;
    const why = exitCode === null ? `the session ended (${reason})` : `the session's process exited with status ${exitCode}`;
    for (const run of [...this.runs.values()]) {
      if (run === this.running) this.finish(run, 'TASK_STATE_FAILED', `${why} before the command finished`, exitCode === null ? {} : exitMeta(exitCode), this.outputArtifact(run));
      else this.finish(run, 'TASK_STATE_FAILED', `${why} before this task ran`);
    }
  }

  /** The terminal state: one last TaskStatusUpdate, followers released, stored, then waiters woken. */
  private finish(run: Run, state: TaskState, text: string, metadata: Record<string, unknown> = {}, artifact?: Artifact): void {
    const id = run.task.id;
    if (!this.runs.delete(id)) return;
    if (run.interruptTimer) clearTimeout(run.interruptTimer);
    const queued = this.queue.indexOf(run);
    if (queued >= 0) this.queue.splice(queued, 1);
    if (this.running === run) this.running = null;
    const now = this.deps.clock.now();
    this.lastFinished = now;
    const message = agentMessage(run.task, text, metadata, now);
    const position = run.task.history?.length ?? 0;
    const artifacts = artifact ? [...(run.task.artifacts ?? []), artifact] : run.task.artifacts;
    run.task = { ...withStatus(run.task, state, now, message), metadata: { ...run.task.metadata, ...metadata }, ...(artifacts ? { artifacts } : {}) };
    this.record.announce(run);
    this.followers.release(id);
    this.record.log('task finished', run, { state, ...metadata });
    const stored = artifact ? [{ position: artifacts!.length - 1, artifact }] : undefined;
    void this.record.persist(run, { messages: [{ position, message }], artifacts: stored }).then(run.resolveDone);
    this.pump();
  }

  /** What the command printed between its marks, as text; none when it never started. */
  private outputArtifact(run: Run): Artifact | undefined {
    if (!run.capture?.started) return undefined;
    const { bytes, truncated } = run.capture.captured();
    const metadata: Record<string, unknown> = { bytes: bytes.length };
    if (truncated) metadata.truncated = true;
    return { artifactId: uuidv7(this.deps.clock.now()), name: 'output', description: 'What the command printed in the terminal', parts: [{ text: terminalText(bytes), mediaType: 'text/plain' }], metadata };
  }

  private typeOrLog(bytes: Uint8Array): boolean {
    try {
      this.session.type(bytes);
      return true;
    } catch (e) {
      this.deps.logger.log('warn', 'task input not written', { session: this.session.id, error: e });
      return false;
    }
  }
}
