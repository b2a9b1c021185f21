// The contract between a session's task queue and the parts that run and record its tasks.
import type { Task } from '../protocol/a2a.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { TaskStore } from '../ports/task-store.ts';
import type { TaskSender } from './agent-presence.ts';
import type { CommandCapture } from './shell-command.ts';
import type { TaskPlan } from './task-plan.ts';

export interface TaskLimits {
  /** Unfinished tasks per session; one more is RATE_LIMITED. */
  maxPending: number;
  /** Output kept in a command's artifact; the rest is dropped and the artifact says `truncated`. */
  maxOutputBytes: number;
  /** A command waits until no human has typed for this long. */
  humanQuietMs: number;
  /** A cancel's second Ctrl-C follows its first after this long. */
  secondInterruptMs: number;
  /** After a cancel's last Ctrl-C, the next task waits this long. */
  settleMs: number;
  /** A human's Ctrl-C/Ctrl-Z/Ctrl-\ during a command: without its end mark by then, the task is CANCELED. */
  interruptGraceMs: number;
}

export interface TaskDeps {
  store: TaskStore;
  clock: Clock;
  logger: Logger;
  limits: TaskLimits;
}

export type Params = () => Record<string, unknown> | undefined;

/** A task that is not terminal yet, with what running it needs. */
export interface Run {
  task: Task;
  plan: TaskPlan;
  /** Service parameters of the connection that last sent this task a message: they go on its events. */
  params: Params;
  /** Who sent it: shown as an agent of the session while it is unfinished. */
  sender: TaskSender;
  done: Promise<void>;
  resolveDone: () => void;
  capture: CommandCapture | null;
  interruptTimer: ReturnType<typeof setTimeout> | null;
}

