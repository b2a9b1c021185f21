// One task's events as A2A v1.0 StreamResponse objects, for an SSE stream of the standard bindings:
// the task first, then every status update the task runner announces (an artifact the update
// brings comes just before it), ending at the first terminal or interrupted state, or with an error
// when the credential that opened it is revoked or expires (docs/sharing.md).
import type { BindingError } from '../protocol/errors.ts';
import type { Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from '../protocol/a2a.ts';
import { artifactChunks } from './artifact-chunks.ts';
import type { LogFrame } from '../hub/types.ts';
import { TaskConnection } from '../tasks/task-connection.ts';

export type StreamResponse = { task: Task } | { statusUpdate: TaskStatusUpdateEvent } | { artifactUpdate: TaskArtifactUpdateEvent };

/** States after which nothing more is streamed (a2a-model.md, TaskState). */
const GOING_ON: ReadonlySet<string> = new Set(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']);

export class TaskEventStream implements AsyncIterable<StreamResponse> {
  /** What the task runner delivers the task's TaskStatusUpdate log frames to. */
  readonly follower: TaskConnection;
  private readonly queue: StreamResponse[] = [];
  private readonly artifactsSent = new Set<string>();
  /** Frames delivered before `begin`: they are newer than the task it is given, so they follow it. */
  private early: LogFrame[] | null = [];
  private wake: (() => void) | null = null;
  private ended = false;
  /** Why the stream ended early (its credential ended): what the reader's next `next()` throws. */
  private failure: BindingError | null = null;
  private readonly endListeners: Array<() => void> = [];

  constructor(clientId: string) {
    this.follower = new TaskConnection(clientId, (frame) => (this.early ? this.early.push(frame) : this.onFrame(frame)));
  }

  /** The connection's id, as audit lines name it. */
  get clientId(): string {
    return this.follower.clientId;
  }

  /** The first event: the task as it was when the stream began. */
  begin(task: Task): void {
    if (this.ended) return;
    for (const a of task.artifacts ?? []) this.artifactsSent.add(a.artifactId);
    this.push({ task });
    const early = this.early ?? [];
    this.early = null;
    if (!GOING_ON.has(task.status.state)) this.finish();
    for (const f of early) this.onFrame(f);
  }

  /** `fn` runs once when the stream is over (finished, failed, or its reader went away); at once if it is already. */
  whenEnded(fn: () => void): void {
    if (this.ended) fn();
    else this.endListeners.push(fn);
  }

  /**
   * Ends the stream from outside with `err` (its credential was revoked or expired): nothing queued
   * or later reaches the reader, whose next `next()` throws `err` (sse.ts makes it the last event).
   */
  end(err: BindingError): void {
    if (this.ended) return;
    this.queue.length = 0;
    this.failure = err;
    this.finish();
  }

  /** Ends the stream quietly (the operation that opened it failed before returning it). */
  close(): void {
    this.finish();
  }

  /** A plain iterator rather than a generator: `return()` must end the stream even while `next()` waits. */
  [Symbol.asyncIterator](): AsyncIterator<StreamResponse> {
    return {
      next: () => this.next(),
      return: () => {
        this.finish();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  private async next(): Promise<IteratorResult<StreamResponse>> {
    for (;;) {
      const event = this.queue.shift();
      if (event) return { done: false, value: event };
      const failure = this.failure;
      this.failure = null;
      if (failure) throw failure;
      if (this.ended) return { done: true, value: undefined };
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  private onFrame(frame: LogFrame): void {
    if (this.ended) return;
    const { task, delta } = (JSON.parse(frame.json) as { payload: { task: Task; delta: TaskStatusUpdateEvent } }).payload;
    for (const artifact of task.artifacts ?? []) {
      if (this.artifactsSent.has(artifact.artifactId)) continue;
      this.artifactsSent.add(artifact.artifactId);
      for (const chunk of artifactChunks(task.id, task.contextId, artifact)) this.push({ artifactUpdate: chunk });
    }
    this.push({ statusUpdate: delta });
    if (!GOING_ON.has(delta.status.state)) this.finish();
  }

  private push(event: StreamResponse): void {
    this.queue.push(event);
    this.wake?.();
    this.wake = null;
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.wake?.();
    this.wake = null;
    for (const fn of this.endListeners.splice(0)) fn();
  }
}
