// Small builders for the A2A objects a task is made of.
import { uuidv7 } from '../core/ids.ts';
import type { Message, Task, TaskState } from '../protocol/a2a.ts';

/** A message from the agent's side (a status message), already part of the task. */
export function agentMessage(task: Task, text: string, metadata: Record<string, unknown>, now: number): Message {
  const message: Message = { messageId: uuidv7(now), contextId: task.contextId, taskId: task.id, role: 'ROLE_AGENT', parts: [{ text }] };
  if (Object.keys(metadata).length > 0) message.metadata = metadata;
  return message;
}

/** The task moved to `state`, with a status message that also joins its history. */
export function withStatus(task: Task, state: TaskState, now: number, message?: Message): Task {
  const status = message ? { state, message, timestamp: new Date(now).toISOString() } : { state, timestamp: new Date(now).toISOString() };
  return { ...task, status, history: message ? [...(task.history ?? []), message] : task.history };
}

/** A copy to hand out: the newest `historyLength` messages (all when undefined, none when 0). */
export function taskView(task: Task, historyLength?: number): Task {
  const { history, ...rest } = task;
  if (historyLength === 0 || !history) return rest;
  return { ...rest, history: historyLength === undefined ? [...history] : history.slice(-historyLength) };
}
