// One session's join flush, replay and membership over in-memory ports: no process, no socket.
import { describe, expect, it } from 'vitest';
import { BindingError } from '../../src/protocol/errors.ts';
import { REPLAY_PAGE_FRAMES } from '../../src/hub/session-log.ts';
import { deferred, OBSERVE, Rig, turn } from './fakes.ts';

describe('join flush', () => {
  it('a first join starts the process and gets RoleAssigned, its MembershipChanged, then a Keyframe numbered with it', async () => {
    const rig = new Rig();
    const { conn, member } = await rig.join('observer', { cols: 100, rows: 40 });

    // The first join of a fresh session becomes controller whatever it asked for.
    expect(conn.labels()).toEqual(['RoleAssigned@0', 'MembershipChanged@1', 'Keyframe@1']);
    const [role, joined, keyframe] = conn.frames();
    expect(role!.payload).toEqual({ kind: 'RoleAssigned', role: 'controller', client_id: member.clientId });
    expect(role!.id).toBe(`join-${member.clientId}`);
    expect(joined!.payload).toEqual({ kind: 'MembershipChanged', controllers: [{ client_id: member.clientId }], observers: [] });
    expect(keyframe!.payload).toMatchObject({ kind: 'Keyframe', snapshot_format: 'vt100-screen-state-v1', snapshot_cols: 100, snapshot_rows: 40, anchor_sequence: 0 });
    expect(rig.pty.spawned).toEqual([expect.objectContaining({ sessionId: rig.record.id, backend: 'native', argv: ['/bin/sh', '-l'], cwd: '/home/test', cols: 100, rows: 40 })]);
    expect(rig.session.state).toBe('running');
    expect(rig.store.log.map((e) => `${e.kind}@${e.sequence}`)).toEqual(['MembershipChanged@1']);
    // Only the first: a later join gets the role it asks for.
    const second = await rig.join('observer');
    expect(second.conn.frames()[0]!.payload).toEqual({ kind: 'RoleAssigned', role: 'observer', client_id: second.member.clientId });
  });

  it('replays (replay_from, now], then the MembershipChanged and Keyframe, then what happened meanwhile, each frame once', async () => {
    const rig = new Rig();
    const first = await rig.join('controller');
    await rig.output('one ');
    await rig.output('two ');
    expect(rig.session.currentSequence).toBe(3);

    // Hold the replay read: output and a resize that arrive meanwhile must wait for the Keyframe.
    const gate = deferred();
    rig.store.readGate = gate.promise;
    const second = rig.member();
    const joining = rig.session.join(second.member, { role: 'observer' }, 1, 'j2');
    await turn();
    await rig.output('three ');
    await rig.session.resize(first.member, 90, 20);
    await turn();
    expect(second.conn.labels()).toEqual(['RoleAssigned@3']);
    gate.resolve();
    rig.store.readGate = null;
    await joining;

    expect(second.conn.labels()).toEqual(['RoleAssigned@3', 'Output@2', 'Output@3', 'MembershipChanged@4', 'Keyframe@4', 'Output@5', 'Resize@6']);
    const keyframe = second.conn.frames()[4]!;
    expect(keyframe.payload.anchor_sequence).toBe(3);
    expect(atob(String(keyframe.payload.snapshot))).toBe('one two ');
    // The controller saw every log frame once, in order, live.
    expect(first.conn.labels()).toEqual(['RoleAssigned@0', 'MembershipChanged@1', 'Keyframe@1', 'Output@2', 'Output@3', 'MembershipChanged@4', 'Output@5', 'Resize@6']);
  });

  it('sends the replay while its Keyframe is still being cut; output meanwhile waits for the Keyframe', async () => {
    const rig = new Rig();
    const first = await rig.join('controller');
    await rig.output('one ');
    await rig.output('two ');

    const gate = deferred();
    rig.screens[0]!.snapshotGate = gate.promise;
    const second = rig.member();
    const joining = rig.session.join(second.member, { role: 'observer' }, 1, 'j2');
    for (let i = 0; i < 50 && second.conn.sent.length < 4; i++) await turn();
    await rig.output('three ');
    await turn();
    // The replay and the join's MembershipChanged are out; the Keyframe is not, nor what came after it.
    expect(second.conn.labels()).toEqual(['RoleAssigned@3', 'Output@2', 'Output@3', 'MembershipChanged@4']);
    gate.resolve();
    await joining;

    expect(second.conn.labels()).toEqual(['RoleAssigned@3', 'Output@2', 'Output@3', 'MembershipChanged@4', 'Keyframe@4', 'Output@5']);
    expect(second.conn.frames()[4]!.payload).toMatchObject({ anchor_sequence: 3 });
    expect(first.conn.labels().slice(-2)).toEqual(['MembershipChanged@4', 'Output@5']);
  });

  it('reads a long replay a page at a time, with replay_max_bytes too, and sends every frame asked for once, in order', async () => {
    const rig = new Rig({ replayBufferFrames: 100_000 });
    await rig.join('controller');
    for (let i = 0; i < REPLAY_PAGE_FRAMES * 3 + 7; i++) await rig.output(`line ${i}\r\n`);
    const last = rig.session.currentSequence;
    rig.store.readLimits.length = 0;
    const whole = rig.member();
    await rig.session.join(whole.member, { role: 'observer' }, 0, 'all');
    const labels = whole.conn.labels();
    const replayed = labels.slice(1, labels.indexOf(`Keyframe@${last + 1}`));
    expect(replayed).toEqual(rig.store.log.filter((e) => e.sequence <= last + 1).map((e) => `${e.kind}@${e.sequence}`));
    expect(rig.store.readLimits.length).toBeGreaterThanOrEqual(4);
    // Small frames: whole pages once the first read has shown their size.
    expect(rig.store.readLimits.slice(1).every((l) => l === REPLAY_PAGE_FRAMES)).toBe(true);

    // The newest frames within the budget: the same as the old whole read picked, every read a page.
    rig.store.readLimits.length = 0;
    const some = rig.member();
    await rig.session.join(some.member, { role: 'observer', replay_max_bytes: 5000 }, 0, 'some');
    const frames = some.conn.frames().slice(1, -1);
    const chars = frames.reduce((n, f) => n + JSON.stringify(f).length, 0);
    expect(chars).toBeLessThanOrEqual(5000);
    expect(frames.length).toBeGreaterThan(10);
    expect(frames.at(-1)!.sequence).toBe(rig.session.currentSequence);
    expect(frames.map((f) => f.sequence)).toEqual(Array.from({ length: frames.length }, (_, i) => frames[0]!.sequence + i));
    expect(rig.store.readLimits.every((l) => l! <= REPLAY_PAGE_FRAMES)).toBe(true);
  });

  it('reads a replay of large frames about 1 MiB at a time, every frame once, in order', async () => {
    const rig = new Rig({ replayBufferFrames: 100_000 });
    await rig.join('controller');
    const frame = 'x'.repeat(60 * 1024);
    for (let i = 0; i < 80; i++) await rig.output(frame);
    const last = rig.session.currentSequence;
    rig.store.readLimits.length = 0;
    const whole = rig.member();
    await rig.session.join(whole.member, { role: 'observer' }, 0, 'all');
    const labels = whole.conn.labels();
    expect(labels.slice(1, labels.indexOf(`Keyframe@${last + 1}`))).toEqual(rig.store.log.filter((e) => e.sequence <= last + 1).map((e) => `${e.kind}@${e.sequence}`));
    // No read holds more than about a megabyte of the log, however many frames a page may have.
    expect(rig.store.readLimits.every((l) => l! * frame.length <= 1.25 * 1024 * 1024)).toBe(true);
  });

  it('a replay_from the log never issued is REPLAY_OUT_OF_RANGE, and the flush goes on', async () => {
    const rig = new Rig();
    await rig.join('controller');
    const { conn } = await rig.join('observer', { replayFrom: 99 });
    expect(conn.labels()).toEqual(['RoleAssigned@1', 'Error@2', 'MembershipChanged@2', 'Keyframe@2']);
    expect(conn.frames()[1]!.payload).toMatchObject({ code: 'REPLAY_OUT_OF_RANGE', oldest_retained_sequence: 1, current_sequence: 2 });
  });

  it('Output the Keyframe already shows is not sent again to a member whose flush held it', async () => {
    const rig = new Rig();
    await rig.join('controller');
    const gate = deferred();
    rig.store.readGate = gate.promise;
    const late = rig.member();
    const joining = rig.session.join(late.member, { role: 'observer' }, 0, 'j');
    await turn();
    await rig.output('x');
    gate.resolve();
    await joining;
    expect(late.conn.labels().filter((l) => l.startsWith('Output'))).toEqual(['Output@3']);
  });

  it('binary members get live Output as PW1O, JSON members as base64 JSON, from the same sequence', async () => {
    const rig = new Rig();
    const json = await rig.join('controller');
    const bin = await rig.join('observer', { binary: true });
    await rig.output('hi');
    expect(bin.conn.sent.at(-1)).toEqual({ binary: true, sequence: 3, text: 'hi' });
    expect(json.conn.frames().at(-1)!.payload).toEqual({ kind: 'Output', stream: 'stdout', data: btoa('hi') });
    expect(json.conn.frames().at(-1)!.sequence).toBe(3);
  });

  it('leave emits the final MembershipChanged to the leaver too; a disconnect only to the others', async () => {
    const rig = new Rig();
    const a = await rig.join('controller');
    const b = await rig.join('observer');
    const c = await rig.join('observer');
    rig.session.leave(b.member);
    expect(b.conn.labels().at(-1)).toBe('MembershipChanged@4');
    rig.session.detach(c.member);
    expect(c.conn.labels().at(-1)).toBe('MembershipChanged@4');
    expect(a.conn.frames().at(-1)!.payload).toEqual({ kind: 'MembershipChanged', controllers: [{ client_id: a.member.clientId }], observers: [] });
  });
});

describe('roles and capacity', () => {
  it('downgrades a controller past max_controllers, refuses an observer past max_observers', async () => {
    const rig = new Rig({ maxControllers: 1, maxObservers: 1 });
    await rig.join('controller');
    const second = await rig.join('controller');
    expect(second.conn.frames()[0]!.payload).toEqual({ kind: 'RoleAssigned', role: 'observer', client_id: second.member.clientId, downgraded: true, reason: 'max_controllers (1) reached' });
    const third = rig.member();
    const refused = await rig.session.join(third.member, { role: 'observer' }, undefined, 'j').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BindingError);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', fatal: true });
    expect(third.conn.sent).toEqual([]);
    expect(rig.session.membership().observers).toHaveLength(1);
  });

  it('refuses controller to a pty:observe principal, before anything is sent or started', async () => {
    const rig = new Rig();
    const m = rig.member(OBSERVE);
    await expect(rig.session.join(m.member, { role: 'controller' }, undefined, 'j')).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(m.conn.sent).toEqual([]);
    expect(rig.pty.spawned).toEqual([]);
    const watcher = await rig.join('observer', { rights: OBSERVE });
    expect(watcher.conn.frames()[0]!.payload.role).toBe('observer');
  });

  it('request_role moves a member within capacity and tells everyone; observers cannot type', async () => {
    const rig = new Rig({ maxControllers: 1 });
    const a = await rig.join('controller');
    const b = await rig.join('observer');
    expect(() => rig.session.input(b.member, new Uint8Array([65]))).toThrow(expect.objectContaining({ code: 'PERMISSION_DENIED' }));
    rig.session.requestRole(b.member, 'controller', 'r1');
    expect(b.conn.frames().at(-1)!.payload).toMatchObject({ role: 'observer', downgraded: true });
    rig.session.requestRole(a.member, 'observer', 'r2');
    rig.session.requestRole(b.member, 'controller', 'r3');
    expect(b.conn.frames().slice(-2).map((f) => f.payload.kind)).toEqual(['RoleAssigned', 'MembershipChanged']);
    expect(rig.session.membership()).toEqual({ controllers: [{ client_id: b.member.clientId }], observers: [{ client_id: a.member.clientId }] });
    rig.session.input(b.member, new TextEncoder().encode('ls\r'));
    expect(rig.pty.writes).toEqual([{ sessionId: rig.record.id, text: 'ls\r' }]);
  });
});
