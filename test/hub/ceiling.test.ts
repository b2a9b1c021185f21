// The sequence ceiling (docs/protocol.md §3.4) over in-memory ports: a number above the stored
// ceiling reaches nobody, neither live nor through a join's replay, until a higher one is stored.
import { describe, expect, it } from 'vitest';
import { LiveSession } from '../../src/hub/live-session.ts';
import { deferred, Rig, turn } from './fakes.ts';

describe('the sequence ceiling', () => {
  it('holds frames above the stored ceiling until the reservation is stored, then delivers them in order', async () => {
    const rig = new Rig();
    // The session as a restart loads it: numbers up to 3 used, ceiling 3, nothing reserved beyond.
    const gate = deferred();
    rig.store.reserveGate = gate.promise;
    rig.session = new LiveSession(rig.deps, rig.record, { numbering: { last: 3, ceiling: 3 }, makeScreen: rig.deps.screens, retire: () => undefined });
    const joining = rig.join('controller');
    await turn();
    await rig.output('held ');
    // Numbered and logged (journaled), sent to nobody but the joiner's own RoleAssigned.
    expect(rig.store.log.map((e) => `${e.kind}@${e.sequence}`)).toEqual(['MembershipChanged@4', 'Output@5']);
    const watcher = rig.member();
    rig.session.members.admit(watcher.member, 'observer');
    await rig.output('more ');
    expect(watcher.conn.frames()).toEqual([]);
    gate.resolve();
    const joined = await joining;
    await turn();
    expect(rig.store.ceilings.get(rig.record.id)).toBeGreaterThanOrEqual(4 + 4096);
    expect(joined.conn.labels()).toEqual(['RoleAssigned@3', 'MembershipChanged@4', 'Keyframe@4', 'Output@5', 'Output@6']);
    // Members get the held frames once they may, in order.
    expect(watcher.conn.labels()).toEqual(['MembershipChanged@4', 'Output@5', 'Output@6']);
  });
});
