// One session's process lifecycle, its end and retirement, and log retention, over in-memory ports.
import { describe, expect, it } from 'vitest';
import { deferred, Rig, turn } from './fakes.ts';

const closedOf = (rig: Rig) => rig.store.log.filter((e) => e.kind === 'Closed').map((e) => (JSON.parse(e.frame) as { payload: unknown }).payload);

describe('lifecycle', () => {
  it('created → running at the first join → closed at exit: Closed, goodbye and close 1000, then retired once stored', async () => {
    const rig = new Rig();
    expect(rig.session.state).toBe('created');
    const a = await rig.join('controller');
    expect(rig.session.state).toBe('running');
    expect(rig.store.sessions.get(rig.record.id)!.state).toBe('running');
    await rig.output('bye');
    rig.session.onExit({ exitCode: 3, signal: null });
    await turn();
    expect(rig.session.state).toBe('closed');
    expect(closedOf(rig)).toEqual([{ kind: 'Closed', exit_code: 3, reason: 'normal' }]);
    expect(a.conn.labels().slice(-3)).toEqual(['Output@2', 'Closed@3', 'binding_goodbye@3']);
    expect(a.conn.closed).toEqual({ code: 1000, reason: 'session_closed' });
    await turn();
    expect(rig.retired).toEqual([rig.session]);
    expect(rig.screens[0]!.disposed).toBe(true);
    expect(rig.store.sessions.get(rig.record.id)).toMatchObject({ state: 'closed', exitCode: 3, closeReason: 'normal' });
  });

  it('an exit by signal, or after a kill, is `killed`', async () => {
    const rig = new Rig();
    await rig.join('controller');
    expect(rig.session.kill()).toBe('closing');
    expect(rig.pty.kills).toEqual([{ sessionId: rig.record.id, signal: 'SIGHUP' }]);
    rig.session.onExit({ exitCode: 0, signal: null });
    await turn();
    expect(closedOf(rig)).toEqual([{ kind: 'Closed', exit_code: 0, reason: 'killed' }]);

    const rig2 = new Rig();
    await rig2.join('controller');
    rig2.session.onExit({ exitCode: null, signal: 9 });
    await turn();
    expect(closedOf(rig2)).toEqual([{ kind: 'Closed', exit_code: null, reason: 'killed', detail: 'signal 9' }]);
  });

  it('a session killed before it started ends at once, and a later join cannot start it', async () => {
    const rig = new Rig();
    expect(rig.session.kill()).toBe('closed');
    expect(closedOf(rig)).toEqual([{ kind: 'Closed', exit_code: null, reason: 'killed', detail: 'deleted before it started' }]);
    expect(rig.session.kill()).toBeNull();
    const late = await rig.join('controller');
    expect(rig.pty.spawned).toEqual([]);
    expect(late.conn.labels()).toEqual(['RoleAssigned@1', 'Closed@1', 'Keyframe@1', 'binding_goodbye@1']);
    expect(late.conn.frames()[0]!.payload).toMatchObject({ role: 'observer', reason: 'the session has ended' });
    await expect(rig.session.ensureRunning()).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });

  it('a kill while the process is starting is delivered once it exists', async () => {
    const rig = new Rig();
    const gate = deferred();
    rig.pty.spawnGate = gate.promise;
    const joining = rig.join('controller');
    await turn();
    expect(rig.session.kill()).toBe('closing');
    expect(rig.pty.kills).toEqual([]);
    gate.resolve();
    await joining;
    expect(rig.pty.kills).toEqual([{ sessionId: rig.record.id, signal: 'SIGHUP' }]);
  });

  it('two joins of a session that is starting share one spawn', async () => {
    const rig = new Rig();
    const gate = deferred();
    rig.pty.spawnGate = gate.promise;
    const a = rig.join('controller');
    const b = rig.join('observer');
    await turn();
    gate.resolve();
    await Promise.all([a, b]);
    expect(rig.pty.spawned).toHaveLength(1);
    expect(rig.session.membership().controllers.length + rig.session.membership().observers.length).toBe(2);
  });

  it('a program that cannot start refuses the join and ends the session with Closed(error)', async () => {
    const rig = new Rig();
    rig.pty.spawnFailure = { code: 'not_found', message: 'no such program: nope' };
    const m = rig.member();
    await expect(rig.session.join(m.member, { role: 'controller' }, undefined, 'j')).rejects.toMatchObject({ code: 'INVALID_REQUEST', metadata: { reason: 'spawn.not_found' } });
    expect(m.conn.sent).toEqual([]);
    expect(rig.screens[0]!.disposed).toBe(true);
    expect(rig.session.state).toBe('closed');
    expect(closedOf(rig)).toEqual([{ kind: 'Closed', exit_code: null, reason: 'error', detail: "could not start the session's process: no such program: nope" }]);
    expect(rig.store.sessions.get(rig.record.id)).toMatchObject({ state: 'closed', closeReason: 'error' });
    // A later join reads the ended session (its Closed, then goodbye); nothing is spawned again.
    const late = await rig.join('controller');
    expect(late.conn.frames().map((f) => f.op)).toContain('binding_goodbye');
    expect(rig.pty.spawned).toHaveLength(1);
  });

  it('a start that fails for a passing reason (the host did not answer) refuses the join and leaves the session startable', async () => {
    const rig = new Rig();
    rig.pty.spawnFailure = { code: 'spawn_failed', message: 'pty host did not answer within 10000 ms' };
    const m = rig.member();
    await expect(rig.session.join(m.member, { role: 'controller' }, undefined, 'j')).rejects.toMatchObject({ code: 'INVALID_REQUEST', metadata: { reason: 'spawn.spawn_failed' } });
    expect(rig.session.state).toBe('created');
    expect(closedOf(rig)).toEqual([]);
    rig.pty.spawnFailure = null;
    await rig.join('controller');
    expect(rig.session.state).toBe('running');
  });

  it('while the PTY host is lost: members hear it, input is refused, a kill ends the session here; adopted again, input works', async () => {
    const rig = new Rig();
    const a = await rig.join('controller');
    rig.session.hostLost('the PTY host connection was lost (test)');
    expect(a.conn.frames().at(-1)!.payload).toMatchObject({ code: 'INTERNAL', message: 'the PTY host connection was lost (test)', retryable: true });
    expect(() => rig.session.input(a.member, new Uint8Array([1]))).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
    rig.session.adopted({ sessionId: rig.record.id, backend: 'native', pid: 1, cols: 80, rows: 24 });
    rig.session.input(a.member, new Uint8Array([65]));
    expect(rig.pty.writes).toHaveLength(1);

    rig.session.hostLost('lost again');
    expect(rig.session.kill()).toBe('closed');
    expect(rig.pty.kills).toEqual([]);
    expect(closedOf(rig)).toEqual([{ kind: 'Closed', exit_code: null, reason: 'killed', detail: 'deleted while the PTY host was unreachable' }]);
  });

  it('terminate drains the output queued before it, then ends with the reason given', async () => {
    const rig = new Rig();
    const a = await rig.join('controller');
    rig.session.onOutput(new TextEncoder().encode('last words'));
    rig.session.terminate('instance_terminated', 'server shutdown');
    expect(a.conn.labels().slice(-3)).toEqual(['Output@2', 'Closed@3', 'binding_goodbye@3']);
    expect(closedOf(rig)).toEqual([{ kind: 'Closed', exit_code: null, reason: 'instance_terminated', detail: 'server shutdown' }]);
  });

  it('a `created` record the host runs (started just before a crash) is adopted as running', async () => {
    const rig = new Rig();
    rig.session.adopted({ sessionId: rig.record.id, backend: 'tmux', pid: 7, cols: 0, rows: 0 });
    expect(rig.session.latestRecord).toMatchObject({ state: 'running', backend: 'tmux', sessionClass: 'managed', cols: 80, rows: 24 });
    await turn();
    expect(rig.store.sessions.get(rig.record.id)).toMatchObject({ state: 'running', backend: 'tmux' });
  });

  it('observers see output and controller input, and their end before Closed is logged', async () => {
    const rig = new Rig();
    const seen: string[] = [];
    rig.session.observe({
      output: (d) => seen.push(`out:${new TextDecoder().decode(d)}`),
      input: (d) => seen.push(`in:${new TextDecoder().decode(d)}`),
      ended: (code, reason) => seen.push(`end:${code}:${reason}:${rig.store.log.some((e) => e.kind === 'Closed')}`),
    });
    const a = await rig.join('controller');
    rig.session.input(a.member, new TextEncoder().encode('x'));
    await rig.output('y');
    rig.session.onExit({ exitCode: 0, signal: null });
    await turn();
    expect(seen).toEqual(['in:x', 'out:y', 'end:0:normal:false']);
  });
});

describe('retention', () => {
  it('prunes in the background every replay_buffer_frames/4 frames (at least 16), one prune at a time', async () => {
    const rig = new Rig({ replayBufferFrames: 40, replayRetentionSeconds: 60 });
    const gate = deferred();
    rig.store.pruneGate = gate.promise;
    await rig.join('controller');
    // The join's MembershipChanged is frame 1.
    for (let i = 0; i < 14; i++) await rig.output(`${i} `);
    expect(rig.store.prunes).toEqual([]);
    await rig.output('the 16th frame');
    expect(rig.store.prunes).toEqual([{ sessionId: rig.record.id, keepFrames: 40, keepSeconds: 60 }]);
    // The first prune is still running: the next budget does not start a second one.
    for (let i = 0; i < 20; i++) await rig.output('.');
    expect(rig.store.prunes).toHaveLength(1);
    gate.resolve();
    await turn();
    for (let i = 0; i < 16; i++) await rig.output('.');
    expect(rig.store.prunes).toHaveLength(2);
  });

  it('a replay below what retention kept is REPLAY_OUT_OF_RANGE; from the oldest kept minus one it is whole', async () => {
    const rig = new Rig({ replayBufferFrames: 16, replayRetentionSeconds: 1 });
    await rig.join('controller');
    rig.clock.t += 5000;
    for (let i = 0; i < 40; i++) await rig.output('.');
    await turn();
    const oldest = rig.store.log[0]!.sequence;
    expect(oldest).toBeGreaterThan(1);
    expect(await rig.session.replayRange(oldest - 2, rig.session.currentSequence)).toMatchObject({ code: 'REPLAY_OUT_OF_RANGE' });
    const whole = await rig.session.replayRange(oldest - 1, rig.session.currentSequence);
    if (whole instanceof Error) throw whole;
    const read: number[] = [];
    for await (const page of whole) read.push(...page.map((e) => e.sequence));
    expect(read).toEqual(rig.store.log.map((e) => e.sequence));
  });
});
