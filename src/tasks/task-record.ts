// A session's task changes made known (docs/protocol.md §8.2): each one a TaskStatusUpdate log
// frame for the task's followers, a write to the store, and a log line.
import type { Session } from '../hub/types.ts';
import type { TaskStatusUpdateEvent } from '../protocol/a2a.ts';
import type { TaskWrite } from '../ports/task-store.ts';
import { TaskFollowers } from './task-followers.ts';
import { taskView } from './task-objects.ts';
import type { Run, TaskDeps } from './task-run.ts';

export class TaskRecord {
  readonly followers = new TaskFollowers();
  /** The latest store write: reads wait for it so they see every change made before them. */
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly session: Session,
    private readonly deps: TaskDeps,
  ) {}

  /** A TaskStatusUpdate log frame to the task's followers, with the service parameters of its sender. */
  announce(run: Run): void {
    const { task } = run;
    const params = run.params();
    const delta: TaskStatusUpdateEvent = { taskId: task.id, contextId: task.contextId, status: task.status };
    if (params) delta.metadata = { service_parameters: params };
    this.session.emitTaskUpdate({ task: taskView(task, 0), delta }, this.followers.of(task.id), params);
  }

  /** Stores the task as it is now (and the messages and artifacts in `add`); a failed write is logged, not thrown. */
  persist(run: Run, add: Omit<TaskWrite, 'task'> = {}): Promise<void> {
    const written = this.deps.store.saveTask({ task: run.task, ...add }).catch((e: unknown) => {
      this.deps.logger.log('error', 'task write failed', { session: this.session.id, task_id: run.task.id, error: e });
    });
    this.writes = written;
    return written;
  }

  /** Resolves once every task change made so far is committed. */
  flushed(): Promise<void> {
    return this.writes;
  }

  log(msg: string, run: Run, fields: Record<string, unknown> = {}): void {
    const params = run.params();
    this.deps.logger.log('info', msg, { session: this.session.id, task_id: run.task.id, ...fields, ...(params ? { service_parameters: params } : {}) });
  }
}
