// Who follows which task on one session: the connection that streamed it and its subscribers.
// TaskStatusUpdate frames go to them only (docs/protocol.md §3.3, §8.2), live and in a join's replay.
import type { OpContext } from '../hub/types.ts';
import type { LogEntry } from '../protocol/logged-frames.ts';
import { loggedTaskUpdate } from '../protocol/logged-frames.ts';
import { TaskConnection } from './task-connection.ts';

export class TaskFollowers {
  private readonly connections = new Map<string, TaskConnection>();
  private readonly byTask = new Map<string, Set<TaskConnection>>();

  /** This connection's task side, made on first use and dropped when it closes. */
  connection(ctx: OpContext): TaskConnection {
    const known = this.connections.get(ctx.clientId);
    if (known) return known;
    const conn = new TaskConnection(ctx.clientId, (frame) => ctx.sendLog(frame));
    this.connections.set(ctx.clientId, conn);
    ctx.onClose(() => {
      this.connections.delete(conn.clientId);
      for (const id of conn.tasks) this.byTask.get(id)?.delete(conn);
    });
    return conn;
  }

  follow(taskId: string, conn: TaskConnection): void {
    let set = this.byTask.get(taskId);
    if (!set) this.byTask.set(taskId, (set = new Set()));
    set.add(conn);
    conn.tasks.add(taskId);
  }

  unfollow(taskId: string, clientId: string): void {
    const conn = this.connections.get(clientId);
    if (!conn) return;
    conn.tasks.delete(taskId);
    this.byTask.get(taskId)?.delete(conn);
  }

  /** A follower that is not one of the session's connections (an A2A HTTP stream) went away. */
  drop(conn: TaskConnection): void {
    for (const id of conn.tasks) this.byTask.get(id)?.delete(conn);
    conn.tasks.clear();
  }

  of(taskId: string): Iterable<TaskConnection> {
    return this.byTask.get(taskId) ?? [];
  }

  /** The task is terminal: nobody follows it any more. */
  release(taskId: string): void {
    for (const conn of this.byTask.get(taskId) ?? []) conn.tasks.delete(taskId);
    this.byTask.delete(taskId);
  }

  /** A join's replay shows a TaskStatusUpdate only to a connection following that task, once. */
  mayReplay(clientId: string, entry: LogEntry): boolean {
    if (entry.kind !== 'TaskStatusUpdate') return true;
    const conn = this.connections.get(clientId);
    const id = updateOf(entry);
    return conn !== undefined && id !== undefined && conn.tasks.has(id) && entry.sequence > conn.lastSent;
  }
}

/** The task a logged TaskStatusUpdate frame is about. */
export function updateOf(entry: LogEntry): string | undefined {
  if (entry.kind !== 'TaskStatusUpdate') return undefined;
  return loggedTaskUpdate(entry.frame)?.delta.taskId;
}
