// The session hub over in-memory ports: PTY events routed to their sessions, connections attached
// through it, the PTY host lost and back, and an orderly stop. No process, no socket, no database.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../src/auth/principal.ts';
import { SessionHub } from '../../src/hub/hub.ts';
import type { SessionRecord } from '../../src/ports/store.ts';
import { clientFrame, deferred, FakeConn, Rig, turn, until } from './fakes.ts';

const alice: Principal = { id: 'alice', scopes: new Set(['pty:control']) };

/** A hub over a Rig's ports, started; `records` are stored beside the Rig's own. */
async function started(rig = new Rig(), ...records: SessionRecord[]): Promise<SessionHub> {
  for (const r of records) rig.store.sessions.set(r.id, r);
  const hub = new SessionHub(rig.deps);
  await hub.start();
  return hub;
}



/** A connection attached to `record` and joined as controller: its frames from the join on. */
async function joined(hub: SessionHub, record: SessionRecord): Promise<FakeConn> {
  const conn = new FakeConn();
  const a = hub.attach(record, conn, alice);
  a.onText(clientFrame('pty.join_session', { role: 'controller' }, 'join'));
  await until(() => conn.labels().some((l) => l.startsWith('Keyframe')));
  return conn;
}

/** A joined session whose PTY host was just lost ('first'), with a grace of 1 s on a fake clock. */
async function hostLost() {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const rig = new Rig({ ptyHostLossGraceMs: 1000 });
  const hub = await started(rig);
  const conn = await joined(hub, rig.record);
  const pty = rig.pty.listener!;
  pty.onHostLost!('first');
  return { rig, hub, conn, pty };
}

const bytes = (text: string) => new TextEncoder().encode(text);
const outputs = (conn: FakeConn) => conn.frames().filter((f) => f.payload.kind === 'Output').map((f) => atob(String(f.payload.data)));

afterEach(() => {
  vi.useRealTimers();
});

describe('SessionHub', () => {
  it('routes each PTY event to its own session, in order; an exit ends only that session, with Closed, goodbye and close 1000', async () => {
    const rig = new Rig();
    const other: SessionRecord = { ...rig.record, id: 'other-session' };
    const hub = await started(rig, other);
    const a = await joined(hub, rig.record);
    const b = await joined(hub, other);
    const pty = rig.pty.listener!;

    pty.onData(rig.record.id, bytes('one '));
    pty.onData(other.id, bytes('two '));
    pty.onData(rig.record.id, bytes('three'));
    await until(() => outputs(a).join('') === 'one three' && outputs(b).join('') === 'two ');
    // Nothing of one session reaches the other.
    for (let i = 0; i < 10; i++) await turn();
    expect(outputs(b).join('')).toBe('two ');

    pty.onExit(rig.record.id, { exitCode: 3, signal: null });
    await until(() => a.closed !== null);
    const closedAt = a.frames().at(-2)!.sequence;
    expect(a.labels().slice(-2)).toEqual([`Closed@${closedAt}`, `binding_goodbye@${closedAt}`]);
    expect(a.frames().at(-2)!.payload).toEqual({ kind: 'Closed', exit_code: 3, reason: 'normal' });
    expect(a.closed).toEqual({ code: 1000, reason: 'session_closed' });
    expect(b.closed).toBeNull();
    expect(b.labels().at(-1)).toMatch(/^Output@/);
    await hub.shutdown(false);
  });

  it('acknowledges at once a numbered PTY event for a session it does not hold', async () => {
    const rig = new Rig();
    const hub = await started(rig);
    rig.pty.listener!.onData('no-such-session', bytes('x'), 7);
    rig.pty.listener!.onExit('no-such-session', { exitCode: 0, signal: null }, 8);
    expect(rig.pty.acks).toEqual([
      { sessionId: 'no-such-session', n: 7 },
      { sessionId: 'no-such-session', n: 8 },
    ]);
    await hub.shutdown(false);
  });

  it('a connection to a session the store does not have gets INVALID_REQUEST and close 4404', async () => {
    const rig = new Rig();
    const hub = await started(rig);
    const conn = new FakeConn();
    hub.attach({ ...rig.record, id: 'gone' }, conn, alice);
    await until(() => conn.closed !== null);
    expect(conn.frames().map((f) => [f.op, f.payload.code])).toEqual([['Error', 'INVALID_REQUEST']]);
    expect(conn.closed!.code).toBe(4404);
    await hub.shutdown(false);
  });

  it('a lost PTY host: members hear INTERNAL, input is refused; back within the grace, the session runs on', async () => {
    const rig = new Rig();
    const hub = await started(rig);
    const conn = new FakeConn();
    const a = hub.attach(rig.record, conn, alice);
    a.onText(clientFrame('pty.join_session', { role: 'controller' }, 'join'));
    await until(() => conn.labels().some((l) => l.startsWith('Keyframe')));
    const pty = rig.pty.listener!;

    pty.onHostLost!('socket closed');
    expect(hub.ptyHostReachable).toBe(false);
    expect(conn.frames().at(-1)!.payload).toMatchObject({ code: 'INTERNAL', message: expect.stringContaining('socket closed') });
    a.onText(clientFrame('pty.session_input', { data: btoa('ls\r') }, 'in1'));
    await until(() => conn.frames().at(-1)!.id === 'in1');
    expect(conn.frames().at(-1)!.payload).toMatchObject({ code: 'INTERNAL', message: expect.stringContaining('try again shortly') });
    expect(rig.pty.writes).toEqual([]);

    rig.pty.listed = [{ sessionId: rig.record.id, backend: 'native', pid: 4242, cols: 80, rows: 24 }];
    pty.onHostRestored!();
    await until(() => hub.ptyHostReachable);
    a.onText(clientFrame('pty.session_input', { data: btoa('ls\r') }, 'in2'));
    await until(() => rig.pty.writes.length === 1);
    expect(rig.pty.writes[0]!.text).toBe('ls\r');
    expect(conn.closed).toBeNull();
    expect(conn.labels().filter((l) => l.startsWith('Closed'))).toEqual([]);
    await hub.shutdown(false);
  });

  it('a PTY host unreachable past the grace: its sessions end with reason error, once, however often it is lost meanwhile', async () => {
    const { hub, conn, pty } = await hostLost();
    vi.advanceTimersByTime(600);
    // A second loss does not restart the grace: it counts from the first.
    pty.onHostLost!('second');
    vi.advanceTimersByTime(399);
    await turn();
    expect(conn.closed).toBeNull();
    vi.advanceTimersByTime(1);
    await until(() => conn.closed !== null);
    const closed = conn.frames().filter((f) => f.payload.kind === 'Closed');
    expect(closed.map((f) => f.payload)).toEqual([{ kind: 'Closed', exit_code: null, reason: 'error', detail: 'the PTY host has been unreachable since: first' }]);
    expect(hub.ptyHostReachable).toBe(false);
    await hub.shutdown(false);
  });

  it('a host lost again while what it runs is re-adopted stays unreachable, and its grace still ends the session', async () => {
    const { rig, hub, conn, pty } = await hostLost();
    const gate = deferred();
    rig.pty.listGate = gate.promise;
    rig.pty.listed = [{ sessionId: rig.record.id, backend: 'native', pid: 4242, cols: 80, rows: 24 }];
    pty.onHostRestored!();
    await turn();
    pty.onHostLost!('again');
    gate.resolve();
    for (let i = 0; i < 20; i++) await turn();
    expect(hub.ptyHostReachable).toBe(false);
    vi.advanceTimersByTime(1000);
    await until(() => conn.closed !== null);
    expect(conn.frames().find((f) => f.payload.kind === 'Closed')!.payload).toMatchObject({ reason: 'error', detail: 'the PTY host has been unreachable since: again' });
    await hub.shutdown(false);
  });

  it('kill: the process gets SIGHUP, and its exit reads as killed to every member', async () => {
    const rig = new Rig();
    const hub = await started(rig);
    const conn = await joined(hub, rig.record);
    expect(await hub.kill(rig.record.id)).toBe('closing');
    expect(rig.pty.kills).toEqual([{ sessionId: rig.record.id, signal: 'SIGHUP' }]);
    rig.pty.listener!.onExit(rig.record.id, { exitCode: 0, signal: null });
    await until(() => conn.closed !== null);
    expect(conn.frames().find((f) => f.payload.kind === 'Closed')!.payload).toEqual({ kind: 'Closed', exit_code: 0, reason: 'killed' });
    expect(await hub.kill(rig.record.id)).toBeNull();
    await hub.shutdown(false);
  });

  it('shutdown with the processes: members hear Closed (instance_terminated) before the goodbye; every connection gets server_shutdown and close 1000', async () => {
    const rig = new Rig();
    const hub = await started(rig);
    const member = await joined(hub, rig.record);
    const bystander = new FakeConn();
    hub.attach(rig.record, bystander, alice);
    await until(() => bystander.sent.length === 1);

    await hub.shutdown(true);
    // (What follows the close, here a second goodbye, a real socket no longer sends.)
    expect(member.labels().slice(4, 6)).toEqual(['Closed@2', 'binding_goodbye@2']);
    expect(member.frames()[4]!.payload).toMatchObject({ kind: 'Closed', reason: 'instance_terminated' });
    expect(member.frames()[5]!.payload).toEqual({ reason: 'server_shutdown' });
    expect(member.closed).toEqual({ code: 1000, reason: 'server_shutdown' });
    expect(bystander.labels()).toEqual(['binding_hello@1', 'binding_goodbye@2']);
    expect(bystander.closed).toEqual({ code: 1000, reason: 'server_shutdown' });
    // Everything numbered is stored: the next start numbers on from here.
    expect(rig.store.ceilings.get(rig.record.id)).toBe(2);
  });
});
