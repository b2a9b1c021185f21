// Unit tests of the standard bindings' task streams: TaskEventStream (src/a2a/task-events.ts) and
// its SSE body (src/a2a/sse.ts), fed frames as the task runner delivers them.
import { describe, expect, it } from 'vitest';
import { BindingError } from '../../src/protocol/errors.ts';
import { sseResponse } from '../../src/a2a/sse.ts';
import { TaskEventStream, type StreamResponse } from '../../src/a2a/task-events.ts';
import type { Task, TaskState } from '../../src/protocol/a2a.ts';

const task = (state: TaskState, artifacts: Task['artifacts'] = undefined): Task => ({
  id: 't1',
  contextId: 's1',
  status: { state, timestamp: '2026-01-01T00:00:00.000Z' },
  ...(artifacts ? { artifacts } : {}),
});
let sequence = 0;
/** A TaskStatusUpdate log frame as SessionTasks.announce makes it. */
const frame = (t: Task) => ({ sequence: ++sequence, json: JSON.stringify({ op: 'TaskStatusUpdate', payload: { task: t, delta: { taskId: t.id, contextId: t.contextId, status: t.status } } }) });
const output = [{ artifactId: 'a1', name: 'output', parts: [{ text: 'hi\n' }] }];

const kinds = (events: StreamResponse[]) => events.map((e) => ('task' in e ? `task:${e.task.status.state}` : 'statusUpdate' in e ? e.statusUpdate.status.state : 'artifact'));

async function drain(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe('TaskEventStream', () => {
  it('yields the task, then its updates with the artifact just before the update bringing it, and ends at the terminal one', async () => {
    const s = new TaskEventStream('c1');
    s.begin(task('TASK_STATE_SUBMITTED'));
    s.follower.sendLog(frame(task('TASK_STATE_WORKING')));
    s.follower.sendLog(frame(task('TASK_STATE_COMPLETED', output)));
    s.follower.sendLog(frame(task('TASK_STATE_COMPLETED', output)));
    expect(kinds(await drain(s))).toEqual(['task:TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED']);
  });

  it('holds frames that arrive before the task and puts them after it', async () => {
    const s = new TaskEventStream('c2');
    s.follower.sendLog(frame(task('TASK_STATE_COMPLETED')));
    s.begin(task('TASK_STATE_WORKING'));
    expect(kinds(await drain(s))).toEqual(['task:TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
  });

  it('does not repeat an artifact the first task already had, and a terminal task ends the stream at once', async () => {
    const s = new TaskEventStream('c3');
    s.begin(task('TASK_STATE_CANCELED', output));
    s.follower.sendLog(frame(task('TASK_STATE_CANCELED', output)));
    expect(kinds(await drain(s))).toEqual(['task:TASK_STATE_CANCELED']);
  });

  it('return() ends a reader that is waiting, and the end runs its callback once', async () => {
    const s = new TaskEventStream('c4');
    let ended = 0;
    s.whenEnded(() => ended++);
    s.begin(task('TASK_STATE_WORKING'));
    const it = s[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    const waiting = it.next();
    await it.return!();
    expect(await waiting).toEqual({ done: true, value: undefined });
    s.follower.sendLog(frame(task('TASK_STATE_COMPLETED')));
    expect(ended).toBe(1);
  });
});

describe('TaskEventStream ended by its credential', () => {
  it('end(err) drops what is queued; the reader gets err next, the SSE body its error event, and nothing after', async () => {
    const s = new TaskEventStream('c6');
    let ended = 0;
    s.whenEnded(() => ended++);
    s.begin(task('TASK_STATE_WORKING'));
    s.follower.sendLog(frame(task('TASK_STATE_WORKING', output)));
    s.end(new BindingError('UNAUTHENTICATED', 'the share link of this connection was revoked', { fatal: true }));
    s.follower.sendLog(frame(task('TASK_STATE_COMPLETED', output)));
    const text = await sseResponse(s, (e) => e, (e) => `event: error\ndata: ${JSON.stringify({ code: (e as BindingError).code })}\n\n`).text();
    expect(text).toBe('event: error\ndata: {"code":"UNAUTHENTICATED"}\n\n');
    expect(ended).toBe(1);
    // A listener added after the end runs at once (an operation still setting the stream up).
    s.whenEnded(() => ended++);
    expect(ended).toBe(2);
  });
});

describe('sseResponse', () => {
  it('frames each event as one data line and ends the source when the reader cancels', async () => {
    const s = new TaskEventStream('c5');
    let ended = false;
    s.whenEnded(() => (ended = true));
    s.begin(task('TASK_STATE_WORKING'));
    const res = sseResponse(s, (e) => ({ wrapped: e }), () => 'event: error\ndata: {}\n\n');
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe(`data: ${JSON.stringify({ wrapped: { task: task('TASK_STATE_WORKING') } })}\n\n`);
    void reader.read();
    await reader.cancel();
    expect(ended).toBe(true);
  });

  it('turns a failing source into its error event and closes', async () => {
    const failing: AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('boom')) }),
    };
    const text = await sseResponse(failing, (n) => n, (e) => `event: error\ndata: ${JSON.stringify({ error: String(e) })}\n\n`).text();
    expect(text).toBe('event: error\ndata: {"error":"Error: boom"}\n\n');
  });
});
