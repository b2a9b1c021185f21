// A joined connection that stops reading (docs/protocol.md §6.4), over in-memory ports: its
// Output is dropped, never the session's problem, until its socket drains; then it is told
// PTY_OUTPUT_LAGGED and repainted; at the session's end it gets what it missed before its goodbye.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recoverLagged } from '../../src/hub/flushes.ts';
import { Member } from '../../src/hub/member.ts';
import { FakeConn, OBSERVE, Rig, turn, until } from './fakes.ts';


/** An observer whose lag recovery is the session's, as an attachment wires it. */
async function slowReader(rig: Rig): Promise<{ member: Member; conn: FakeConn }> {
  const conn = new FakeConn();
  const member = new Member(conn, 'slow', undefined, OBSERVE, rig.clock, rig.config.lag, (m) => void recoverLagged(rig.session, m));
  await rig.session.join(member, { role: 'observer' }, undefined, 'j');
  return { member, conn };
}

const outputs = (conn: FakeConn) => conn.frames().filter((f) => f.payload.kind === 'Output').map((f) => atob(String(f.payload.data)));

afterEach(() => {
  vi.useRealTimers();
});

describe('a member that falls behind', () => {
  it('misses Output while its socket is past the high mark; once drained, PTY_OUTPUT_LAGGED and a Keyframe with all of it, then Output again', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const rig = new Rig();
    const fast = await rig.join('controller');
    const { member, conn } = await slowReader(rig);
    const { highBytes, pollMs } = rig.config.lag;
    await rig.output('one ');
    conn.buffered = highBytes + 1;
    await rig.output('two ');
    await rig.output('three ');
    expect(member.lagged).toBe(true);
    expect(outputs(conn)).toEqual(['one ']);
    const seen = conn.sent.length;
    vi.advanceTimersByTime(pollMs * 3);
    await turn();
    expect(conn.sent).toHaveLength(seen);

    conn.buffered = 0;
    vi.advanceTimersByTime(pollMs);
    await until(() => conn.sent.length === seen + 2);
    const [lagged, keyframe] = conn.frames().slice(-2);
    expect(lagged!.payload).toMatchObject({ kind: 'Error', code: 'PTY_OUTPUT_LAGGED' });
    expect(lagged!.payload.message).toContain(`up to sequence ${rig.session.currentSequence}`);
    expect(keyframe!.payload.kind).toBe('Keyframe');
    expect(atob(String(keyframe!.payload.snapshot))).toBe('one two three ');
    expect(member.lagged).toBe(false);

    await rig.output('four');
    expect(outputs(conn)).toEqual(['one ', 'four']);
    // The one that reads got every frame, live.
    expect(outputs(fast.conn)).toEqual(['one ', 'two ', 'three ', 'four']);
  });

  it('given up on by its replay, with nothing dropped after: once drained, it is told nothing more', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const rig = new Rig();
    await rig.join('controller');
    const { member, conn } = await slowReader(rig);
    member.fellBehind();
    expect(member.lagged).toBe(true);
    const seen = conn.sent.length;
    vi.advanceTimersByTime(rig.config.lag.pollMs);
    await turn();
    expect(member.lagged).toBe(false);
    expect(conn.sent).toHaveLength(seen);
  });

  it('at the session end it gets the Output it missed from its cursor, the Closed frame and its goodbye, in order', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const rig = new Rig();
    await rig.join('controller');
    const { conn } = await slowReader(rig);
    await rig.output('one ');
    conn.buffered = rig.config.lag.highBytes + 1;
    await rig.output('two ');
    await rig.output('three ');
    conn.buffered = 0;
    rig.session.terminate('normal', 'done');
    await until(() => conn.closed !== null);
    expect(outputs(conn)).toEqual(['one ', 'two ', 'three ']);
    const closedAt = rig.session.currentSequence;
    expect(conn.labels().slice(-2)).toEqual([`Closed@${closedAt}`, `binding_goodbye@${closedAt}`]);
    expect(conn.labels().filter((l) => l.startsWith('Error'))).toEqual([]);
    expect(conn.closed).toEqual({ code: 1000, reason: 'session_closed' });
  });

  it('a member whose socket closed starts no lag watch and drops nothing', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const rig = new Rig();
    await rig.join('controller');
    const { member, conn } = await slowReader(rig);
    member.disconnected();
    conn.buffered = rig.config.lag.highBytes + 1;
    await rig.output('late');
    expect(member.lagged).toBe(false);
    expect(member.connected).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
