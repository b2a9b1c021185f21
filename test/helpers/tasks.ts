// Helpers for the A2A task operations over a TestClient.
import { expect } from 'vitest';
import { uuidv7 } from '../../src/core/ids.ts';
import { TestClient, type Frame } from './client.ts';

export interface TaskJson {
  id: string;
  contextId: string;
  status: { state: string; timestamp: string; message?: { role: string; parts: Array<{ text?: string }>; metadata?: Record<string, unknown> } };
  artifacts?: Array<{ artifactId: string; name?: string; parts: Array<{ text?: string; mediaType?: string }>; metadata?: Record<string, unknown> }>;
  history?: Array<{ messageId: string; role: string; taskId?: string; contextId?: string; parts: Array<Record<string, unknown>> }>;
  metadata?: Record<string, unknown>;
}

export const userMessage = (parts: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) => ({ messageId: uuidv7(), role: 'ROLE_USER', parts, ...extra });
export const text = (t: string) => userMessage([{ text: t }]);

/** Sends a request and waits for the frame answering it (its response op or an Error). */
export async function request(c: TestClient, op: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}, timeoutMs = 15_000): Promise<Frame> {
  const id = c.send(op, payload, extra);
  return c.waitForFrame((f) => f.id === id && f.op !== 'TaskStatusUpdate', `${op} answer`, timeoutMs);
}

/** The answer must be `op`; returns its payload. */
export async function ok(c: TestClient, op: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}, timeoutMs?: number): Promise<Record<string, unknown>> {
  const f = await request(c, op, payload, extra, timeoutMs);
  expect(f.op, JSON.stringify(f.payload)).not.toBe('Error');
  return f.payload;
}

export async function run(c: TestClient, command: string, timeoutMs?: number): Promise<TaskJson> {
  return (await ok(c, 'SendMessage', { message: text(command) }, {}, timeoutMs)).task as TaskJson;
}

export const updates = (c: TestClient, taskId?: string): Frame[] =>
  c.frames().filter((f) => f.op === 'TaskStatusUpdate' && (!taskId || (f.payload.delta as { taskId: string }).taskId === taskId));

export const stateOf = (f: Frame): string => (f.payload.task as TaskJson).status.state;

export const outputOf = (t: TaskJson): string => t.artifacts?.[0]?.parts[0]?.text ?? '';

export const isTerminalUpdate = (f: Frame): boolean => ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED'].includes(stateOf(f));

/** A connection that has read binding_hello and is ready for task operations (no join). */
export async function connectAgent(url: string, token: string | null): Promise<TestClient> {
  const c = await TestClient.connect(url, { token });
  await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
  return c;
}

/** SendStreamingMessage with a command; resolves with the task id its Accepted names. */
export async function stream(c: TestClient, command: string, extra: Record<string, unknown> = {}): Promise<string> {
  const id = c.send('SendStreamingMessage', { message: text(command) }, extra);
  const accepted = await c.waitForFrame((f) => f.id === id, 'SendStreamingMessage.Accepted');
  expect(accepted.op).toBe('SendStreamingMessage.Accepted');
  return String(accepted.payload.task_id);
}

/** The task's first update in `state` (or its terminal one when `state` is 'terminal'). */
export function updateIn(c: TestClient, taskId: string, state: string): Promise<Frame> {
  const match = (f: Frame) => (state === 'terminal' ? isTerminalUpdate(f) : stateOf(f) === state);
  return c.waitFor(() => updates(c, taskId).find(match), `${state} update of ${taskId}`);
}

/** Types a line into a running task (a message carrying its taskId); answers at once. */
export function answer(c: TestClient, taskId: string, line: string): Promise<Record<string, unknown>> {
  return ok(c, 'SendMessage', { message: userMessage([{ text: line }], { taskId }), configuration: { returnImmediately: true } });
}
