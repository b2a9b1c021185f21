// One connection's side of the binding over in-memory ports: frames decoded and answered in
// arrival order, bad input answered with an Error while the connection lives on, join and leave.
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.ts';
import { BindingError } from '../../src/protocol/errors.ts';
import type { Attachment } from '../../src/hub/attachment.ts';
import { SessionHub } from '../../src/hub/hub.ts';
import { clientFrame, deferred, FakeConn, Rig, turn, until } from './fakes.ts';

const alice: Principal = { id: 'alice', scopes: new Set(['pty:control']) };
const olga: Principal = { id: 'olga', scopes: new Set(['pty:observe']) };



/** A hub over the fakes and one connection attached to the Rig's session, past its binding_hello. */
async function attached(o: { principal?: Principal; binary?: boolean; rig?: Rig } = {}): Promise<{ rig: Rig; hub: SessionHub; conn: FakeConn; a: Attachment }> {
  const rig = o.rig ?? new Rig();
  const hub = new SessionHub(rig.deps);
  await hub.start();
  const conn = new FakeConn(o.binary);
  const a = hub.attach(rig.record, conn, o.principal ?? alice);
  await until(() => conn.sent.length === 1);
  return { rig, hub, conn, a };
}

/** Sends `text` and waits for the frame answering `id`. */
async function ask(conn: FakeConn, a: Attachment, text: string, id: string | null): Promise<{ op: string; payload: Record<string, unknown> }> {
  const before = conn.sent.length;
  a.onText(text);
  await until(() => conn.frames().slice(before).some((f) => (id === null ? f.op === 'Error' : f.id === id)));
  return conn.frames().slice(before).find((f) => (id === null ? f.op === 'Error' : f.id === id))!;
}

describe('Attachment', () => {
  it('opens with binding_hello carrying the session and its current sequence', async () => {
    const { conn, rig } = await attached();
    const [hello] = conn.frames();
    expect(hello!.op).toBe('binding_hello');
    expect(hello!.payload).toMatchObject({ session: { session_id: rig.record.id, current_sequence: 0 } });
  });

  it('answers each bad frame with an INVALID_REQUEST or UNSUPPORTED_OPERATION Error, echoing its id where it has one, and lives on', async () => {
    const { conn, a, rig } = await attached();
    const cases: Array<[string, string | null, string, string | RegExp]> = [
      ['{"op":', null, 'INVALID_REQUEST', 'frame is not valid JSON'],
      ['[1,2]', null, 'INVALID_REQUEST', 'frame must be a single JSON object'],
      [JSON.stringify({ op: 'ping', id: 'no-ts', payload: {} }), 'no-ts', 'INVALID_REQUEST', /ts/],
      [clientFrame('ping', {}, 'seq', { sequence: 4 }), 'seq', 'INVALID_REQUEST', /sequence is server-only/],
      [clientFrame('pty.teleport', {}, 'tp'), 'tp', 'UNSUPPORTED_OPERATION', /pty.teleport/],
      [clientFrame('toString', {}, 'proto'), 'proto', 'UNSUPPORTED_OPERATION', /toString/],
      [clientFrame('pty.join_session', { role: 'boss' }, 'j0'), 'j0', 'INVALID_REQUEST', /role/],
      [clientFrame('pty.join_session', { role: 'controller', session_id: 'another' }, 'j1'), 'j1', 'INVALID_REQUEST', /names another session/],
      [clientFrame('pty.session_input', { data: 'aGk=' }, 'in0'), 'in0', 'INVALID_REQUEST', 'join the session first (pty.join_session)'],
    ];
    for (const [text, id, code, message] of cases) {
      const answer = await ask(conn, a, text, id);
      expect(answer.op, text).toBe('Error');
      expect(answer.payload.code, text).toBe(code);
      expect(answer.payload.message, text).toMatch(message);
    }
    expect(conn.closed).toBeNull();
    expect(rig.pty.spawned).toEqual([]);
    // Still answering: a ping, and a join.
    expect((await ask(conn, a, clientFrame('ping', { client_ts: 'x' }, 'p'), 'p')).payload).toMatchObject({ client_ts: 'x' });
    expect((await ask(conn, a, clientFrame('pty.join_session', { role: 'controller' }, 'j2'), 'j2')).payload).toMatchObject({ kind: 'RoleAssigned', role: 'controller' });
  });

  it('refuses binary frames on a JSON connection, and input that is not base64, and a second join', async () => {
    const { conn, a } = await attached();
    await ask(conn, a, clientFrame('pty.join_session', { role: 'controller' }, 'j'), 'j');
    a.onBinary(new Uint8Array([1, 2, 3]));
    await until(() => conn.frames().at(-1)!.op === 'Error');
    expect(conn.frames().at(-1)!.payload).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('pty-ws.v1.binary') });
    expect((await ask(conn, a, clientFrame('pty.session_input', { data: '***' }, 'in'), 'in')).payload).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('base64') });
    expect((await ask(conn, a, clientFrame('pty.join_session', { role: 'controller' }, 'j2'), 'j2')).payload).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('already joined') });
    expect(conn.closed).toBeNull();
  });

  it('handles frames in arrival order: input sent right after a join waits for the join and reaches the PTY', async () => {
    const rig = new Rig();
    const gate = deferred();
    rig.pty.spawnGate = gate.promise;
    const { conn, a } = await attached({ rig });
    a.onText(clientFrame('pty.join_session', { role: 'controller' }, 'j'));
    a.onText(clientFrame('pty.session_input', { data: btoa('echo hi\r') }, 'in'));
    for (let i = 0; i < 10; i++) await turn();
    expect(rig.pty.spawned).toHaveLength(1);
    expect(rig.pty.writes).toEqual([]);
    gate.resolve();
    await until(() => rig.pty.writes.length === 1);
    expect(rig.pty.writes[0]).toEqual({ sessionId: rig.record.id, text: 'echo hi\r' });
    expect(conn.frames().filter((f) => f.op === 'Error')).toEqual([]);
  });

  it('an observer-only principal may watch but not type: PERMISSION_DENIED, and the connection lives on', async () => {
    const { conn, a, rig } = await attached({ principal: olga });
    expect((await ask(conn, a, clientFrame('pty.join_session', { role: 'observer' }, 'j'), 'j')).payload).toMatchObject({ kind: 'RoleAssigned', role: 'observer' });
    expect((await ask(conn, a, clientFrame('pty.session_input', { data: 'aGk=' }, 'in'), 'in')).payload).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(rig.pty.writes).toEqual([]);
    expect(conn.closed).toBeNull();
  });

  it('a write the PTY host reports failed is PTY_WRITE_FAILED, echoing the input frame', async () => {
    const { conn, a, rig } = await attached();
    await ask(conn, a, clientFrame('pty.join_session', { role: 'controller' }, 'j'), 'j');
    rig.pty.writeFailure = 'the pipe broke';
    expect((await ask(conn, a, clientFrame('pty.session_input', { data: 'aGk=' }, 'in'), 'in')).payload).toEqual({ kind: 'Error', code: 'PTY_WRITE_FAILED', message: 'the pipe broke' });
    expect(conn.closed).toBeNull();
  });

  it('leave: a final MembershipChanged, binding_goodbye leave_session and close 1000; frames after it are not answered', async () => {
    const { conn, a, hub, rig } = await attached();
    await ask(conn, a, clientFrame('pty.join_session', { role: 'controller' }, 'j'), 'j');
    let ended = 0;
    a.onEnded(() => ended++);
    a.onText(clientFrame('pty.leave_session', {}, 'bye'));
    await until(() => conn.closed !== null);
    expect(conn.frames().slice(-2).map((f) => f.payload.kind ?? f.op)).toEqual(['MembershipChanged', 'binding_goodbye']);
    expect(conn.frames().at(-2)!.payload).toMatchObject({ controllers: [], observers: [] });
    expect(conn.frames().at(-1)!.payload).toEqual({ reason: 'leave_session' });
    expect(conn.closed).toEqual({ code: 1000, reason: 'leave_session' });
    expect(ended).toBe(1);
    const sent = conn.sent.length;
    a.onText(clientFrame('ping', {}, 'late'));
    a.onClose();
    for (let i = 0; i < 10; i++) await turn();
    expect(conn.sent).toHaveLength(sent);
    expect(ended).toBe(1);
    expect((await hub.live(rig.record.id))!.membership()).toEqual({ controllers: [], observers: [] });
  });

  it('a socket that closes while its join is under way leaves no member behind', async () => {
    const rig = new Rig();
    const gate = deferred();
    rig.pty.spawnGate = gate.promise;
    const { a, hub } = await attached({ rig });
    a.onText(clientFrame('pty.join_session', { role: 'controller' }, 'j'));
    for (let i = 0; i < 10; i++) await turn();
    a.onClose();
    gate.resolve();
    const s = (await hub.live(rig.record.id))!;
    await until(() => s.state === 'running');
    for (let i = 0; i < 10; i++) await turn();
    expect(s.membership()).toEqual({ controllers: [], observers: [] });
  });

  it('ended from outside (an expired credential): a final Error, its close code, and nothing after', async () => {
    const { conn, a } = await attached();
    await ask(conn, a, clientFrame('pty.join_session', { role: 'controller' }, 'j'), 'j');
    a.end(new BindingError('UNAUTHENTICATED', 'the credential expired', { fatal: true, closeCode: 4401 }));
    expect(conn.frames().at(-1)!.payload).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(conn.closed).toEqual({ code: 4401, reason: 'UNAUTHENTICATED' });
    const sent = conn.sent.length;
    a.goodbye('server_shutdown');
    a.end(new BindingError('INTERNAL', 'again', { fatal: true }));
    expect(conn.sent).toHaveLength(sent);
  });
});
