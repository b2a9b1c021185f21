// The A2A task operations against the real server, a real shell, the PTY host and a libSQL file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { answer, connectAgent, isTerminalUpdate as terminal, ok, outputOf, request, run, stateOf, stream, text, updateIn, updates, userMessage, type TaskJson } from '../helpers/tasks.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  token = server.devToken!;
});
afterAll(async () => {
  await server?.stop();
});

const session = async (body: Record<string, unknown> = {}) => (await server.createSession(body)).attach_url;
const agent = (url: string) => connectAgent(url, token);

describe('conformance scenario 2: the six core operations round-trip', () => {
  it('advertises them in binding_hello and the AgentCard, and each one answers', async () => {
    const c = await agent(await session());
    const hello = c.frames()[0]!;
    const six = ['SendMessage', 'SendStreamingMessage', 'GetTask', 'ListTasks', 'CancelTask', 'SubscribeToTask'];
    expect(hello.payload.supported_operations).toEqual(six);
    const card = (await (await fetch(`${server.origin}/.well-known/agent-card.json`)).json()) as { bindings: Array<{ operations: string[]; notes: string }>; capabilities: { pushNotifications: boolean } };
    expect(card.bindings[0]!.operations).toEqual(six);
    expect(card.bindings[0]!.notes).toMatch(/ListTasks.*session/);
    expect(card.bindings[0]!.notes).toMatch(/UNSUPPORTED_OPERATION/);
    expect(card.capabilities.pushNotifications).toBe(true);

    const sent = await run(c, 'echo round-trip');
    expect(sent).toMatchObject({ contextId: (hello.payload.session as { session_id: string }).session_id, status: { state: 'TASK_STATE_COMPLETED' } });

    const taskId = await stream(c, 'sleep 30');
    await updateIn(c, taskId, 'TASK_STATE_WORKING');

    const sub = await agent(c.ws.url);
    const subAck = await ok(sub, 'SubscribeToTask', { task_id: taskId });
    expect(subAck).toMatchObject({ task: { id: taskId, status: { state: 'TASK_STATE_WORKING' } } });
    expect(typeof subAck.current_sequence).toBe('number');

    expect((await ok(c, 'GetTask', { task_id: taskId })).task).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_WORKING' } });
    const list = await ok(c, 'ListTasks', {});
    expect((list.tasks as TaskJson[]).map((t) => t.id)).toEqual([taskId, sent.id]);
    expect(list).toMatchObject({ next_page_token: '', total_size: 2, page_size: 50 });

    const canceled = await ok(c, 'CancelTask', { task_id: taskId });
    expect(canceled.task).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_CANCELED' } });
    await updateIn(sub, taskId, 'TASK_STATE_CANCELED');
    c.close();
    sub.close();
  });
});

describe('command tasks', () => {
  it('completes on exit status 0 and fails otherwise, with the status and output', async () => {
    const c = await agent(await session());
    const task = await run(c, 'echo hello-$((6*7))');
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.status.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'exit status 0' }], metadata: { exit_code: 0 } });
    expect(outputOf(task)).toBe('hello-42\n');
    expect(task.artifacts![0]).toMatchObject({ name: 'output', parts: [{ mediaType: 'text/plain' }] });
    expect(task.metadata).toMatchObject({ task_kind: 'command', exit_code: 0, command: 'echo hello-$((6*7))' });
    expect(task.history!.map((m) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT']);
    expect(task.history![0]).toMatchObject({ taskId: task.id, contextId: task.contextId, parts: [{ text: 'echo hello-$((6*7))' }] });

    const failed = await run(c, 'echo oops >&2; ret() { return $1; }; ret 3');
    expect(failed.status.state).toBe('TASK_STATE_FAILED');
    expect(failed.status.message).toMatchObject({ parts: [{ text: 'exit status 3' }], metadata: { exit_code: 3 } });
    expect(failed.metadata?.exit_code).toBe(3);
    expect(outputOf(failed)).toBe('oops\n');

    // The shell is the same one: state set by one task is there for the next.
    await run(c, 'cd /tmp && export TASK_VAR=kept');
    expect(outputOf(await run(c, 'pwd; echo $TASK_VAR'))).toBe('/tmp\nkept\n');
    // A comment, a multi-line command and quotes survive the wrapper.
    expect(outputOf(await run(c, "for i in 1 2; do\n  echo \"line $i\"\ndone # trailing comment"))).toBe('line 1\nline 2\n');
    expect((await run(c, 'false')).status.state).toBe('TASK_STATE_FAILED');
    c.close();
  });

  it('keeps the whole output of a long command in the artifact', async () => {
    const c = await agent(await session());
    const task = await run(c, 'seq 1 30000', 30_000);
    const lines = outputOf(task).split('\n');
    expect(lines.length).toBe(30001);
    expect(lines[0]).toBe('1');
    expect(lines[29999]).toBe('30000');
    expect(lines.every((l, i) => i === 30000 ? l === '' : l === String(i + 1))).toBe(true);
    expect(task.artifacts![0]!.metadata).toMatchObject({ bytes: expect.any(Number) });
    expect(task.artifacts![0]!.metadata!.truncated).toBeUndefined();
    c.close();
  });

  it('strips colours and keeps the last rewrite of a carriage-returned line', async () => {
    const c = await agent(await session());
    const task = await run(c, "printf '\\033[31mred\\033[0m\\n'; printf 'progress 10%%\\rprogress 100%%\\n'");
    expect(outputOf(task)).toBe('red\nprogress 100%\n');
    c.close();
  });

  it('works the same in bash', async () => {
    const c = await agent(await session({ argv: ['/bin/bash', '--norc', '--noprofile', '-i'] }));
    const task = await run(c, 'echo "bash $((BASH_VERSINFO[0] > 3))"; (exit 4)');
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    expect(task.metadata?.exit_code).toBe(4);
    expect(outputOf(task)).toBe('bash 1\n');
    c.close();
  });

  it('runs visibly in the terminal: an attached human observer sees the command and its output', async () => {
    const url = await session();
    const human = await TestClient.connect(url, { token });
    await human.join({ role: 'observer' });
    const c = await agent(url);
    const task = await run(c, 'echo seen-by-$((1+1))-humans');
    expect(outputOf(task)).toBe('seen-by-2-humans\n');
    const screen = await human.waitForOutput('seen-by-2-humans');
    expect(screen).toContain('echo seen-by-$((1+1))-humans');
    // The human is not following the task: no TaskStatusUpdate reaches it.
    expect(updates(human)).toEqual([]);
    human.close();
    c.close();
  });

  it('cancels a running sleep 30 with Ctrl-C: CANCELED, last update, shell ready for the next task', async () => {
    const c = await TestClient.connect(await session(), { token });
    await c.join({ role: 'observer' });
    const started = Date.now();
    const taskId = await stream(c, 'echo before-sleep; sleep 30');
    await updateIn(c, taskId, 'TASK_STATE_WORKING');
    await c.waitForOutput('before-sleep\r\n');
    const canceled = (await ok(c, 'CancelTask', { task_id: taskId })).task as TaskJson;
    expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
    expect(canceled.status.message?.parts[0]?.text).toMatch(/Ctrl-C/);
    expect(outputOf(canceled)).toBe('before-sleep\n');
    const last = await updateIn(c, taskId, 'terminal');
    expect(stateOf(last)).toBe('TASK_STATE_CANCELED');
    const next = await run(c, 'echo after-cancel');
    expect(outputOf(next)).toBe('after-cancel\n');
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(updates(c, taskId).at(-1)).toBe(last);
    // Cancelling it again: it is terminal now.
    const again = await request(c, 'CancelTask', { task_id: taskId });
    expect(again.payload).toMatchObject({ code: 'TASK_NOT_CANCELABLE', a2a_error: { code: -32002, data: [{ reason: 'TASK_NOT_CANCELABLE' }] } });
    c.close();
  });

  it('a cancel also stops a command that missed the first Ctrl-C', async () => {
    // The first Ctrl-C can reach the shell instead of a command it is just starting; this command
    // shrugs the first one off the same way, then can be interrupted.
    const c = await TestClient.connect(await session(), { token });
    await c.join({ role: 'observer' });
    const taskId = await stream(c, `sh -c 'trap "" INT; echo armed; sleep 0.2; trap - INT; exec sleep 30'`);
    await c.waitForOutput('armed\r\n');
    expect(((await ok(c, 'CancelTask', { task_id: taskId })).task as TaskJson).status.state).toBe('TASK_STATE_CANCELED');
    expect(outputOf(await run(c, 'echo after-second-interrupt', 10_000))).toBe('after-second-interrupt\n');
    c.close();
  });

  it('a human Ctrl-C in the terminal ends the running task CANCELED', async () => {
    const url = await session();
    const human = await TestClient.connect(url, { token });
    await human.join({ role: 'controller' });
    const c = await agent(url);
    const taskId = await stream(c, 'sleep 30');
    await updateIn(c, taskId, 'TASK_STATE_WORKING');
    await new Promise((r) => setTimeout(r, 300));
    human.send('pty.session_input', { data: b64('\x03') });
    const last = await updateIn(c, taskId, 'terminal');
    expect((last.payload.task as TaskJson).status).toMatchObject({ state: 'TASK_STATE_CANCELED', message: { parts: [{ text: 'interrupted from the terminal' }] } });
    human.close();
    c.close();
  });

  it('fails the running task with the exit status when the shell itself exits', async () => {
    const c = await agent(await session());
    const task = await run(c, 'exit 5');
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    expect(task.metadata?.exit_code).toBe(5);
    expect(task.status.message?.parts[0]?.text).toMatch(/exited with status 5/);
    const after = await request(c, 'SendMessage', { message: text('echo too late') });
    expect(after.payload).toMatchObject({ code: 'INVALID_REQUEST', a2a_error: { data: [{ metadata: { reason: 'session.closed' } }] } });
    expect((await ok(c, 'GetTask', { task_id: task.id })).task).toMatchObject({ status: { state: 'TASK_STATE_FAILED' } });
    c.close();
  });
});

describe('streaming, queueing and following', () => {
  it('SendStreamingMessage: Accepted at once, then SUBMITTED → WORKING → COMPLETED, terminal last', async () => {
    const c = await agent(await session());
    const id = c.send('SendStreamingMessage', { message: text('sleep 0.3; echo streamed') });
    const last = await c.waitFor(() => updates(c).find(terminal), 'terminal update');
    await new Promise((r) => setTimeout(r, 300));
    const mine = c.frames().filter((f) => f.id === id || f.op === 'TaskStatusUpdate');
    expect(mine[0]!.op).toBe('SendStreamingMessage.Accepted');
    const ups = updates(c);
    expect(ups.map(stateOf)).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    expect(ups.at(-1)).toBe(last);
    const seqs = ups.map((f) => f.sequence);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(3);
    for (const u of ups) {
      const delta = u.payload.delta as { taskId: string; contextId: string; status: { state: string } };
      expect(delta.taskId).toBe(mine[0]!.payload.task_id);
      expect(delta.status.state).toBe(stateOf(u));
    }
    expect(outputOf(last.payload.task as TaskJson)).toBe('streamed\n');
    c.close();
  });

  it('queues tasks of one session and runs them one at a time, in order', async () => {
    const c = await agent(await session());
    const ids = ['sleep 0.4; echo first', 'echo second', 'echo third'].map((cmd) => c.send('SendStreamingMessage', { message: text(cmd) }));
    await c.waitFor(() => updates(c).filter(terminal).length === 3, 'three terminal updates');
    const taskIds = ids.map((id) => String(c.frames().find((f) => f.id === id)!.payload.task_id));
    const seqOf = (taskId: string, state: string) => updates(c, taskId).find((f) => stateOf(f) === state)!.sequence;
    expect(seqOf(taskIds[1]!, 'TASK_STATE_WORKING')).toBeGreaterThan(seqOf(taskIds[0]!, 'TASK_STATE_COMPLETED'));
    expect(seqOf(taskIds[2]!, 'TASK_STATE_WORKING')).toBeGreaterThan(seqOf(taskIds[1]!, 'TASK_STATE_COMPLETED'));
    expect(updates(c).filter(terminal).map((f) => outputOf(f.payload.task as TaskJson))).toEqual(['first\n', 'second\n', 'third\n']);
    c.close();
  });

  it('waits while a human has a half-typed line, then runs once the line is cleared', async () => {
    const url = await session();
    const human = await TestClient.connect(url, { token });
    await human.join({ role: 'controller' });
    human.send('pty.session_input', { data: b64('echo half-typ') });
    await human.waitForOutput('echo half-typ');
    const c = await agent(url);
    const task = (await ok(c, 'SendMessage', { message: text('echo agent-ran'), configuration: { returnImmediately: true } })).task as TaskJson;
    expect(task.status.state).toBe('TASK_STATE_SUBMITTED');
    await new Promise((r) => setTimeout(r, 1200));
    expect(((await ok(c, 'GetTask', { task_id: task.id })).task as TaskJson).status.state).toBe('TASK_STATE_SUBMITTED');
    human.send('pty.session_input', { data: b64('\x15') });
    let final: TaskJson | undefined;
    for (let i = 0; i < 50 && !final; i++) {
      const t = (await ok(c, 'GetTask', { task_id: task.id })).task as TaskJson;
      if (t.status.state === 'TASK_STATE_COMPLETED') final = t;
      else await new Promise((r) => setTimeout(r, 200));
    }
    expect(final && outputOf(final)).toBe('agent-ran\n');
    human.close();
    c.close();
  });

  it.each([
    ['sh', undefined],
    ['bash', ['/bin/bash', '--norc', '--noprofile', '-i']],
  ])('runs once the human who left a line half-typed disconnects, clearing that line first (%s)', async (_shell, argv) => {
    const url = await session(argv ? { argv } : {});
    const human = await TestClient.connect(url, { token });
    await human.join({ role: 'controller' });
    const watcher = await TestClient.connect(url, { token });
    await watcher.join({ role: 'observer' });
    // Half a word, the cursor moved back into it (left arrow): the line is cleared whole.
    human.send('pty.session_input', { data: b64('ech\x1b[D') });
    await human.waitForOutput('ech');
    const c = await agent(url);
    const taskId = await stream(c, 'echo agent-ran');
    // Held for the human's line: the presence list says so.
    const activities = (f: { payload: Record<string, unknown> }) => JSON.stringify(f.payload.controllers ?? []);
    await watcher.waitForFrame((f) => f.payload.kind === 'MembershipChanged' && activities(f).includes('waiting for a human to finish their line'), 'the task held');
    human.close();
    const final = (await updateIn(c, taskId, 'terminal')).payload.task as TaskJson;
    expect(final.status.state).toBe('TASK_STATE_COMPLETED');
    expect(outputOf(final)).toBe('agent-ran\n');
    watcher.close();
    c.close();
  });

  it('waits while a full-screen program has the terminal', async () => {
    const url = await session();
    const c = await TestClient.connect(url, { token });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64("printf '\\033[?1049hFULL'; sleep 1.5; printf '\\033[?1049l'\r") });
    await c.waitForOutput('FULL');
    const taskId = await stream(c, 'echo after-full-screen');
    const done = await updateIn(c, taskId, 'terminal');
    expect(outputOf(done.payload.task as TaskJson)).toBe('after-full-screen\n');
    const left = c.frames().find((f) => f.payload.kind === 'Output' && Buffer.from(String(f.payload.data), 'base64').toString('latin1').includes('\x1b[?1049l'))!;
    expect((await updateIn(c, taskId, 'TASK_STATE_WORKING')).sequence).toBeGreaterThan(left.sequence);
    c.close();
  });

  it('continues a running task with input carried by a message with its taskId', async () => {
    // Like an agent at a prompt: it watches the terminal and answers once the question is there.
    const c = await TestClient.connect(await session(), { token });
    await c.join({ role: 'observer' });
    // The prompt is not spelled out in the command, so the echo of the typed line cannot be taken
    // for it: input typed while the shell still reads that line is not echoed by the terminal.
    const taskId = await stream(c, 'printf "%s? " name; read name; echo "hi $name"');
    await c.waitForOutput('name? ');
    const answer = await ok(c, 'SendMessage', { message: userMessage([{ text: 'agent' }], { taskId }) });
    const task = answer.task as TaskJson;
    expect(task).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_COMPLETED' } });
    // The terminal echoes what was typed, as it would for a human.
    expect(outputOf(task)).toBe('name? agent\nhi agent\n');
    expect(task.history!.map((m) => m.role)).toEqual(['ROLE_USER', 'ROLE_USER', 'ROLE_AGENT']);
    // Finished now: another message to it is refused.
    const late = await request(c, 'SendMessage', { message: userMessage([{ text: 'more' }], { taskId }) });
    expect(late.payload).toMatchObject({ code: 'UNSUPPORTED_OPERATION', a2a_error: { code: -32004 } });
    c.close();
  });

  it('types raw input: data {"input"} parts in a shell, and text lines in a session that runs no shell', async () => {
    const shell = await agent(await session());
    const raw = await ok(shell, 'SendMessage', { message: userMessage([{ data: { input: 'echo typed-$((2+3))\r' } }]) });
    expect(raw.task).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' }, metadata: { task_kind: 'input' } });
    const human = await TestClient.connect(shell.ws.url, { token });
    await human.join({ role: 'observer' }, { replay_from: 0 });
    await human.waitForOutput('typed-5');

    const catUrl = await session({ argv: ['/bin/cat'] });
    const watcher = await TestClient.connect(catUrl, { token });
    await watcher.join({ role: 'observer' });
    const cat = await agent(catUrl);
    const typed = (await ok(cat, 'SendMessage', { message: text('meow') })).task as TaskJson;
    expect(typed).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' }, metadata: { task_kind: 'input' } });
    await watcher.waitFor(() => (watcher.output().match(/meow/g)?.length ?? 0) >= 2, 'cat echoing the line back');
    human.close();
    watcher.close();
    shell.close();
    cat.close();
  });
});

describe('following a task', () => {
  it('SubscribeToTask with replay_from after a reconnect: missed updates, then live ones, terminal last', async () => {
    const url = await session();
    const a = await agent(url);
    // The command waits for a line, so nothing finishes it before the test says so.
    const taskId = await stream(a, 'read x; echo "resumed-$x"');
    const submitted = await updateIn(a, taskId, 'TASK_STATE_SUBMITTED');
    const working = await updateIn(a, taskId, 'TASK_STATE_WORKING');
    a.ws.terminate();

    const back = await agent(url);
    const ack = await ok(back, 'SubscribeToTask', { task_id: taskId }, { replay_from: submitted.sequence });
    expect(ack.current_sequence).toBeGreaterThanOrEqual(working.sequence);
    expect((ack.task as TaskJson).status.state).toBe('TASK_STATE_WORKING');
    await back.waitFor(() => updates(back, taskId).length > 0, 'the replayed update');
    await answer(back, taskId, 'go');
    const last = await updateIn(back, taskId, 'terminal');
    const got = updates(back, taskId);
    expect(got[0]!.sequence).toBe(working.sequence);
    expect(got[0]!.payload).toEqual(working.payload);
    // The replayed WORKING, the live one for the line typed into it, then the end.
    expect(got.map(stateOf)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    expect(got.at(-1)).toBe(last);
    // The terminal's echo of the typed line is in the output only if it came after the start mark.
    expect(outputOf(last.payload.task as TaskJson)).toMatch(/^(go\n)?resumed-go\n$/);

    // A subscription to a finished task is refused, as A2A says.
    const done = await request(back, 'SubscribeToTask', { task_id: taskId });
    expect(done.payload).toMatchObject({ code: 'UNSUPPORTED_OPERATION', a2a_error: { code: -32004, data: [{ reason: 'UNSUPPORTED_OPERATION' }] } });
    back.close();
  });

  it('replay_from out of range: REPLAY_OUT_OF_RANGE, and the subscription still goes live', async () => {
    const c = await agent(await session());
    const taskId = await stream(c, 'read x; echo "$x"');
    await updateIn(c, taskId, 'TASK_STATE_WORKING');
    const other = await agent(c.ws.url);
    const subId = other.send('SubscribeToTask', { task_id: taskId }, { replay_from: 1_000_000 });
    const err = await other.waitForFrame((f) => f.id === subId && f.op === 'Error', 'out of range');
    expect(err.payload).toMatchObject({ code: 'REPLAY_OUT_OF_RANGE', a2a_error: { data: [{ reason: 'REPLAY_OUT_OF_RANGE' }] } });
    await answer(c, taskId, 'x');
    await updateIn(other, taskId, 'terminal');
    c.close();
    other.close();
  });

  it('Unsubscribe stops the updates; a joined human replaying the log sees no updates of tasks it does not follow', async () => {
    const url = await session();
    const c = await agent(url);
    const taskId = await stream(c, 'read x; echo "un$x"');
    await updateIn(c, taskId, 'TASK_STATE_WORKING');
    const sub = await agent(url);
    await ok(sub, 'SubscribeToTask', { task_id: taskId });
    expect(await ok(sub, 'Unsubscribe', { task_id: taskId })).toEqual({});
    await answer(c, taskId, 'sub');
    await updateIn(c, taskId, 'terminal');
    await new Promise((r) => setTimeout(r, 200));
    expect(updates(sub)).toEqual([]);

    const late = await TestClient.connect(url, { token });
    await late.join({ role: 'observer' }, { replay_from: 0 });
    expect(late.output()).toContain('unsub');
    expect(updates(late)).toEqual([]);
    c.close();
    sub.close();
    late.close();
  });

  it('a follower that joins the terminal gets updates and PTY frames in one increasing sequence', async () => {
    const url = await session();
    const c = await TestClient.connect(url, { token });
    await c.join({ role: 'controller' });
    const id = c.send('SendStreamingMessage', { message: text('for i in 1 2 3; do echo tick-$i; sleep 0.1; done') });
    await c.waitFor(() => updates(c).find(terminal), 'terminal update');
    await c.waitForOutput('tick-3');
    const logged = c.frames().filter((f) => f.op === 'TaskStatusUpdate' || ['Output', 'MembershipChanged'].includes(String(f.payload.kind)));
    const seqs = logged.map((f) => f.sequence);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(c.frames().find((f) => f.id === id)?.op).toBe('SendStreamingMessage.Accepted');
    c.close();
  });
});

describe('service parameters (conformance scenario 13)', () => {
  it('puts the first frame\'s trace id on every task event, and UpdateServiceParameters replaces it', async () => {
    const c = await agent(await session());
    const taskId = await stream(c, 'read x; echo "traced-$x"', { service_parameters: { trace_id: 'trace-first' } });
    await updateIn(c, taskId, 'TASK_STATE_WORKING');
    await ok(c, 'UpdateServiceParameters', { service_parameters: { trace_id: 'trace-second' } });
    await answer(c, taskId, 'on');
    await updateIn(c, taskId, 'terminal');
    const traceOf = (u: (typeof ups)[number]) => (u as unknown as { service_parameters: Record<string, unknown> }).service_parameters.trace_id;
    const ups = updates(c, taskId);
    expect(ups.map(stateOf)).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    expect(ups.map(traceOf)).toEqual(['trace-first', 'trace-first', 'trace-second', 'trace-second']);
    for (const u of ups) expect((u.payload.delta as { metadata: unknown }).metadata).toEqual({ service_parameters: { trace_id: traceOf(u) } });
    expect(server.logs.some((l) => l.includes('"task finished"') && l.includes('trace-second'))).toBe(true);
    c.close();
  });
});

describe('ListTasks', () => {
  it('pages over 120 tasks newest first with opaque tokens, sizes 1..100', async () => {
    const c = await agent(await session({ argv: ['/bin/cat'] }));
    const made: string[] = [];
    for (let i = 0; i < 120; i++) made.push(((await ok(c, 'SendMessage', { message: text(`line ${i}`) })).task as TaskJson).id);
    const seen: TaskJson[] = [];
    let token: string | null = null;
    const sizes: number[] = [];
    do {
      const page = await ok(c, 'ListTasks', { page_size: 50, page_token: token });
      sizes.push((page.tasks as TaskJson[]).length);
      seen.push(...(page.tasks as TaskJson[]));
      expect(page.total_size).toBe(120);
      token = page.next_page_token as string;
    } while (token);
    expect(sizes).toEqual([50, 50, 20]);
    expect(seen.map((t) => t.id)).toEqual([...made].reverse());
    expect(seen.every((t) => t.history === undefined && t.status.state === 'TASK_STATE_COMPLETED')).toBe(true);
    const stamps = seen.map((t) => t.status.timestamp);
    expect(stamps).toEqual([...stamps].sort().reverse());

    const def = await ok(c, 'ListTasks', { history_length: 1 });
    expect((def.tasks as TaskJson[]).length).toBe(50);
    expect((def.tasks as TaskJson[])[0]!.history!.length).toBe(1);
    const filtered = await ok(c, 'ListTasks', { filter: { status: 'TASK_STATE_FAILED' } });
    expect(filtered).toMatchObject({ tasks: [], total_size: 0, next_page_token: '' });
    for (const bad of [{ page_size: 0 }, { page_size: 101 }, { page_token: 'not-a-token' }]) {
      expect((await request(c, 'ListTasks', bad)).payload).toMatchObject({ code: 'INVALID_REQUEST', a2a_error: { code: -32600 } });
    }
    c.close();
  }, 60_000);

  it('GetTask honours history_length', async () => {
    const c = await agent(await session());
    const task = await run(c, 'echo hist');
    expect(((await ok(c, 'GetTask', { task_id: task.id, history_length: 1 })).task as TaskJson).history!.map((m) => m.role)).toEqual(['ROLE_AGENT']);
    expect(((await ok(c, 'GetTask', { task_id: task.id, history_length: 0 })).task as TaskJson).history).toBeUndefined();
    expect(((await ok(c, 'GetTask', { task_id: task.id })).task as TaskJson).history!.length).toBe(2);
    c.close();
  });
});
