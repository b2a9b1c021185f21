// The A2A task side of every session: one SessionTasks per session, created on first use.
import type { Session } from '../hub/types.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { LogEntry } from '../protocol/logged-frames.ts';
import type { TaskStore } from '../ports/task-store.ts';
import { SessionTasks } from './session-tasks.ts';
import type { TaskLimits } from './task-run.ts';
import { agentMessage, withStatus } from './task-objects.ts';

const TASK_LIMITS: TaskLimits = {
  maxPending: 256,
  maxOutputBytes: 8 * 1024 * 1024,
  humanQuietMs: 500,
  secondInterruptMs: 250,
  settleMs: 300,
  interruptGraceMs: 1000,
};

export class TaskService {
  private readonly sessions = new Map<string, SessionTasks>();

  constructor(private readonly deps: { store: TaskStore; clock: Clock; logger: Logger }) {}

  /**
   * Tasks a previous run left unfinished cannot be followed any more (their command's marks were
   * watched in memory): they end FAILED, saying so.
   */
  async start(instanceId: string): Promise<void> {
    const { store, clock, logger } = this.deps;
    const unfinished = await store.unfinishedTasks(instanceId);
    for (const { task, historySize } of unfinished) {
      const now = clock.now();
      const message = agentMessage(task, 'the server restarted before this task finished: its outcome is unknown', {}, now);
      await store.saveTask({ task: withStatus(task, 'TASK_STATE_FAILED', now, message), messages: [{ position: historySize, message }] });
    }
    if (unfinished.length > 0) logger.log('warn', 'tasks left unfinished by the previous run marked FAILED', { count: unfinished.length });
  }

  forSession(session: Session): SessionTasks {
    let tasks = this.sessions.get(session.id);
    if (!tasks) {
      tasks = new SessionTasks(session, { ...this.deps, limits: TASK_LIMITS });
      this.sessions.set(session.id, tasks);
    }
    return tasks;
  }

  /** Null while the session has an unfinished task; else when its last task finished (0: none ran since this router started). */
  quietSince(sessionId: string): number | null {
    return this.sessions.get(sessionId)?.quietSince() ?? 0;
  }

  /** Resolves once every task change of the session made so far is committed (a read after it sees them). */
  flushed(sessionId: string): Promise<void> {
    return this.sessions.get(sessionId)?.flushed() ?? Promise.resolve();
  }

  /** Resolves once every task change made so far, in any session, is committed. */
  async flushedAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((t) => t.flushed()));
  }

  /** The hub's replay filter: TaskStatusUpdate frames only to connections following the task. */
  readonly replayFilter = (sessionId: string, clientId: string, entry: LogEntry): boolean => {
    const tasks = this.sessions.get(sessionId);
    return tasks ? tasks.mayReplay(clientId, entry) : entry.kind !== 'TaskStatusUpdate';
  };
}
