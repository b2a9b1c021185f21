// PlacedHosts (src/host-link/placed-hosts.ts) over in-memory hosts: each session's operations go to
// the host it was placed on, one live link per name, and a host that links again resends only what
// the hub has not acknowledged.
import { describe, expect, it } from 'vitest';
import type { HostResume, PtyHostListener, PtySessionInfo, SpawnSpec } from '../../src/ports/pty-host.ts';
import { PlacedHosts, type HostLink, type RemoteHost } from '../../src/host-link/placed-hosts.ts';
import { FakePty, silentLogger } from '../hub/fakes.ts';

class FakeRemote extends FakePty implements RemoteHost {
  readonly backends = ['native'];
  readonly listeners = new Set<PtyHostListener>();
  readonly started: Array<{ resume?: HostResume; credit?: boolean }> = [];
  override readonly epoch: string;
  constructor(epoch: string, readonly runs: PtySessionInfo[] = []) {
    super();
    this.epoch = epoch;
  }
  override subscribe(listener: PtyHostListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  override startEvents(resume?: HostResume, credit?: boolean): void {
    this.started.push({ resume, credit });
  }
  override async list(): Promise<PtySessionInfo[]> {
    return this.runs;
  }
  lose(): void {
    for (const l of this.listeners) l.onHostLost?.('gone');
  }
}

const spec = (sessionId: string, host?: string): SpawnSpec => ({ sessionId, backend: 'native', argv: ['/bin/sh'], cwd: '/', env: {}, cols: 80, rows: 24, ...(host ? { host } : {}) });
const link = (name: string, host: RemoteHost, drops: Array<[number, string]> = []): HostLink => ({ name, host, drop: (code, reason) => drops.push([code, reason]) });
const text = (s: string) => new TextEncoder().encode(s);

describe('PlacedHosts', () => {
  it('sends each session to the host it was placed on, and refuses a host that is not linked', async () => {
    const local = new FakePty();
    const hosts = new PlacedHosts(local, silentLogger);
    const laptop = new FakeRemote('e1');
    expect(hosts.claim('laptop')).toBe(true);
    await hosts.link(link('laptop', laptop));

    await hosts.spawn(spec('here'));
    await hosts.spawn(spec('there', 'laptop'));
    expect(local.spawned.map((s) => s.sessionId)).toEqual(['here']);
    expect(laptop.spawned).toEqual([spec('there')]);
    expect('host' in laptop.spawned[0]!).toBe(false);
    await expect(hosts.spawn(spec('nowhere', 'vm'))).rejects.toMatchObject({ code: 'spawn_failed' });

    hosts.write('here', text('a'));
    hosts.write('there', text('b'));
    hosts.resize('there', 100, 30);
    hosts.kill('there');
    hosts.ack('there', 7);
    hosts.ack('here', 3);
    hosts.credit('there', 100);
    hosts.credit('here', 50);
    expect(local.writes).toEqual([{ sessionId: 'here', text: 'a' }]);
    expect(laptop.writes).toEqual([{ sessionId: 'there', text: 'b' }]);
    expect(laptop.resizes).toEqual([{ cols: 100, rows: 30 }]);
    expect(laptop.kills).toEqual([{ sessionId: 'there', signal: undefined }]);
    expect(laptop.acks).toEqual([{ sessionId: 'there', n: 7 }]);
    expect(local.acks).toEqual([{ sessionId: 'here', n: 3 }]);
    expect(laptop.credits).toEqual(new Map([['there', 100]]));
    expect(local.credits).toEqual(new Map([['here', 50]]));
    expect(hosts.sessionsOn('laptop')).toBe(1);

    // Its link lost, the session's input fails with a message naming the host; the local host is untouched.
    laptop.lose();
    const failed: string[] = [];
    hosts.write('there', text('c'), (m) => failed.push(m));
    hosts.resize('there', 90, 20, (e) => failed.push(e ?? 'ok'));
    expect(failed).toHaveLength(2);
    expect(failed[0]).toContain('laptop');
    expect(hosts.linked('laptop')).toBeUndefined();
  });

  it('holds one live link per name, from the claim on', async () => {
    const hosts = new PlacedHosts(new FakePty(), silentLogger);
    expect(hosts.claim('vm')).toBe(true);
    expect(hosts.claim('vm')).toBe(false);
    const first = new FakeRemote('e1');
    await hosts.link(link('vm', first));
    expect(hosts.claim('vm')).toBe(false);
    expect(hosts.claim('other')).toBe(true);
    first.lose();
    expect(hosts.claim('vm')).toBe(true);
  });

  it('ends a link on drop, and relays its events but not its loss to the hub', async () => {
    const hosts = new PlacedHosts(new FakePty(), silentLogger);
    const seen: string[] = [];
    hosts.subscribe({ onData: (id, data) => seen.push(`${id}:${new TextDecoder().decode(data)}`), onExit: (id) => seen.push(`${id}:exit`), onHostLost: () => seen.push('lost') });
    const vm = new FakeRemote('e1');
    const drops: Array<[number, string]> = [];
    hosts.claim('vm');
    await hosts.link(link('vm', vm, drops));
    await hosts.spawn(spec('s', 'vm'));
    for (const l of vm.listeners) l.onData('s', text('hi'), 1);
    for (const l of vm.listeners) l.onExit('s', { exitCode: 0, signal: null }, 2);
    expect(hosts.drop('vm', 4401, 'revoked')).toBe(true);
    expect(drops).toEqual([[4401, 'revoked']]);
    expect(seen).toEqual(['s:hi', 's:exit']);
    expect(hosts.drop('vm', 4401, 'revoked')).toBe(false);
  });

  it('places what a linking host lists, and resumes after what the hub acknowledged when it links again with the same epoch', async () => {
    const adopted: Array<[string, string[]]> = [];
    const hosts = new PlacedHosts(new FakePty(), silentLogger, { placedOn: async () => new Set(['s1']), adopt: async (name, listed) => void adopted.push([name, listed.map((i) => i.sessionId)]) });
    const runs = [{ sessionId: 's1', backend: 'native', pid: 10, cols: 80, rows: 24 }];
    const first = new FakeRemote('e1', runs);
    hosts.claim('vm');
    await hosts.link(link('vm', first));
    expect(first.started).toEqual([]);
    hosts.startEvents(undefined, true);
    expect(first.started).toEqual([{ resume: undefined, credit: true }]);
    hosts.ack('s1', 5);
    hosts.ack('s1', 9);
    first.lose();

    const again = new FakeRemote('e1', runs);
    hosts.claim('vm');
    await hosts.link(link('vm', again));
    expect(again.started).toEqual([{ resume: { epoch: 'e1', after: { s1: 9 } }, credit: true }]);
    again.lose();

    // A restarted host numbers its events anew: nothing of the old numbers applies.
    const restarted = new FakeRemote('e2', runs);
    hosts.claim('vm');
    await hosts.link(link('vm', restarted));
    expect(restarted.started).toEqual([{ resume: undefined, credit: true }]);
    expect(adopted).toEqual([['vm', ['s1']], ['vm', ['s1']], ['vm', ['s1']]]);
  });

  it('lets a host speak for the sessions placed on it only: it cannot take over or print into another', async () => {
    const local = new FakePty();
    const hub: string[] = [];
    const hosts = new PlacedHosts(local, silentLogger, { placedOn: async (name) => new Set(name === 'vm' ? ['mine'] : []) });
    hosts.subscribe({ onData: (id, data) => hub.push(`${id}:${new TextDecoder().decode(data)}`), onExit: (id) => hub.push(`${id}:exit`) });
    const info = (sessionId: string) => ({ sessionId, backend: 'native', pid: 10, cols: 80, rows: 24 });
    // It lists a session of the local host and one of another host as its own.
    const vm = new FakeRemote('e1', [info('mine'), info('local-one'), info('elsewhere')]);
    hosts.claim('vm');
    await hosts.link(link('vm', vm));
    hosts.write('local-one', text('secret'));
    expect(local.writes).toEqual([{ sessionId: 'local-one', text: 'secret' }]);
    expect(vm.writes).toEqual([]);
    hosts.write('mine', text('ok'));
    expect(vm.writes).toEqual([{ sessionId: 'mine', text: 'ok' }]);

    for (const l of vm.listeners) {
      l.onData('local-one', text('forged'), 4);
      l.onExit('local-one', { exitCode: 0, signal: null }, 5);
      l.onData('mine', text('real'), 6);
    }
    expect(hub).toEqual(['mine:real']);
    // What it sent for others is acknowledged to it and its output taken (it holds nothing for
    // them), never to the local host.
    expect(vm.acks).toEqual([{ sessionId: 'local-one', n: 4 }, { sessionId: 'local-one', n: 5 }]);
    expect(vm.credits).toEqual(new Map([['local-one', 6]]));
    expect(local.acks).toEqual([]);
    expect(local.credits.size).toBe(0);
  });
});
