// Tasks live in libSQL: stop the router, start it again on the same state directory, read them back.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../src/core/ids.ts';
import { openStore } from '../../storage/open.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { connectAgent, ok, outputOf, run, text, type TaskJson } from '../helpers/tasks.ts';

const started: TestServer[] = [];
afterAll(async () => {
  // Newest first: the first server's directory is the state of both.
  for (const s of started.reverse()) await s.stop();
});

const connect = (server: TestServer, sessionId: string) => connectAgent(server.attachUrl(sessionId), server.devToken);

describe('task persistence across a router restart', () => {
  it('keeps tasks, history and artifacts; tasks cut short end FAILED with the reason', async () => {
    const first = await startTestServer();
    started.push(first);
    const sessionId = first.defaultSession!.id;
    const c = await connect(first, sessionId);
    const done = await run(c, 'echo persisted-$((7*6))');
    const failed = await run(c, 'sh -c "exit 9"');
    const cut = (await ok(c, 'SendMessage', { message: text('sleep 30'), configuration: { returnImmediately: true } })).task as TaskJson;
    for (let i = 0; i < 50; i++) {
      if ((((await ok(c, 'GetTask', { task_id: cut.id })).task as TaskJson).status.state) === 'TASK_STATE_WORKING') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    c.close();
    await first.close();

    // A task a crashed router left WORKING (it never got to write its end).
    const store = await openStore({ url: `file:${join(first.dir, 'pty-ws.db')}` });
    const orphan = uuidv7();
    const at = new Date().toISOString();
    await store.tasks.saveTask({
      task: { id: orphan, contextId: sessionId, status: { state: 'TASK_STATE_WORKING', timestamp: at } },
      messages: [{ position: 0, message: { messageId: uuidv7(), role: 'ROLE_USER', taskId: orphan, contextId: sessionId, parts: [{ text: 'make' }] } }],
    });
    await store.close();

    const second = await startTestServer({}, { 'state-dir': first.dir });
    started.push(second);
    const d = await connect(second, sessionId);
    const back = (await ok(d, 'GetTask', { task_id: done.id })).task as TaskJson;
    expect(back).toEqual(done);
    expect(outputOf(back)).toBe('persisted-42\n');
    expect(back.history!.map((m) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT']);
    expect(((await ok(d, 'GetTask', { task_id: failed.id })).task as TaskJson).metadata).toMatchObject({ exit_code: 9 });

    const cutBack = (await ok(d, 'GetTask', { task_id: cut.id })).task as TaskJson;
    expect(cutBack.status.state).toBe('TASK_STATE_FAILED');
    expect(cutBack.status.message?.parts[0]?.text).toMatch(/session ended .*before the command finished/);

    const orphanBack = (await ok(d, 'GetTask', { task_id: orphan })).task as TaskJson;
    expect(orphanBack.status).toMatchObject({ state: 'TASK_STATE_FAILED', message: { role: 'ROLE_AGENT', parts: [{ text: expect.stringMatching(/server restarted/) }] } });
    expect(orphanBack.history!.map((m) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT']);

    const list = await ok(d, 'ListTasks', {});
    expect((list.tasks as TaskJson[]).map((t) => t.id).sort()).toEqual([done.id, failed.id, cut.id, orphan].sort());
    d.close();
  });
});
