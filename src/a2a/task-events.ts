// One task's events as A2A v1.0 StreamResponse objects, for an SSE stream of the standard bindings:
// the task first, then every status update the task runner announces (an artifact the update
// brings comes just before it), ending at the first terminal or interrupted state.
import type { Artifact, Task, TaskStatusUpdateEvent } from '../protocol/a2a.ts';
import type { LogFrame } from '../hub/types.ts';
import { TaskConnection } from '../tasks/task-connection.ts';

export interface TaskArtifactUpdateEvent {
  taskId: string;
  contextId: string;
  artifact: Artifact;
  append: boolean;
  lastChunk: boolean;
}

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
  private onEnd: (() => void) | null = null;

  constructor(clientId: string) {
    this.follower = new TaskConnection(clientId, (frame) => (this.early ? this.early.push(frame) : this.onFrame(frame)));
  }

  /** The first event: the task as it was when the stream began. */
  begin(task: Task): void {
    for (const a of task.artifacts ?? []) this.artifactsSent.add(a.artifactId);
    this.push({ task });
    const early = this.early ?? [];
    this.early = null;
    if (!GOING_ON.has(task.status.state)) this.end();
    for (const f of early) this.onFrame(f);
  }

  /** Runs once when the stream is over: finished, or its reader went away. */
  whenEnded(fn: () => void): void {
    this.onEnd = fn;
  }

  /** A plain iterator rather than a generator: `return()` must end the stream even while `next()` waits. */
  [Symbol.asyncIterator](): AsyncIterator<StreamResponse> {
    return {
      next: () => this.next(),
      return: () => {
        this.end();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  private async next(): Promise<IteratorResult<StreamResponse>> {
    for (;;) {
      const event = this.queue.shift();
      if (event) return { done: false, value: event };
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
      this.push({ artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact, append: false, lastChunk: true } });
    }
    this.push({ statusUpdate: delta });
    if (!GOING_ON.has(delta.status.state)) this.end();
  }

  private push(event: StreamResponse): void {
    this.queue.push(event);
    this.wake?.();
    this.wake = null;
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.wake?.();
    this.wake = null;
    this.onEnd?.();
  }
}
