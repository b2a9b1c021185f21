// The PTY host's per-session flow control and request replies (docs/protocol.md §9.2–9.3): `flow`
// pauses one session's PTY and no other, a hold ends with the connection that made it, a resize
// is answered once applied or refused, and input that cannot be written is reported. Then the
// router's side against a host without those features (an older host): it falls back to pausing
// everything, and asks nothing the host would not answer.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { PtyHostClient } from '../src/adapter/node/pty-host-client.ts';
import type { SpawnSpec } from '../src/ports.ts';
import { fakeHost } from './helpers/fake-pty-host.ts';
import { useHost, WAIT } from './helpers/pty-host.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('pty host flow and replies', () => {
  const h = useHost('pty-ws-host-flow-');

  function ticker(name: string): SpawnSpec {
    const sessionId = randomUUID();
    h.started.push(sessionId);
    const argv = ['/bin/sh', '-c', `i=0; while :; do i=$((i+1)); echo ${name}-$i; sleep 0.02; done`];
    return { sessionId, backend: 'native', argv, cwd: h.dir, env: { PATH: '/usr/bin:/bin', HOME: h.dir }, cols: 80, rows: 24 };
  }

  const bytes = (id: string) => h.rec.text(id).length;

  /** Whether the session's output grows within a while. */
  async function grows(id: string, ms = 400): Promise<boolean> {
    const before = bytes(id);
    await sleep(ms);
    return bytes(id) > before;
  }

  it('pauses one session alone, and lets it go', async () => {
    const a = ticker('a');
    const b = ticker('b');
    await h.host.spawn(a);
    await h.host.spawn(b);
    await h.rec.waitForOutput(a.sessionId, /a-2\r\n/);
    await h.rec.waitForOutput(b.sessionId, /b-2\r\n/);

    h.host.pauseSession(a.sessionId, true);
    await sleep(200); // what was read before the hold still arrives
    expect(await grows(a.sessionId)).toBe(false);
    expect(await grows(b.sessionId)).toBe(true);

    h.host.pauseSession(a.sessionId, false);
    await vi.waitFor(async () => expect(await grows(a.sessionId, 200)).toBe(true), WAIT);
    // Nothing it printed meanwhile was lost: its numbers run on without a gap.
    const numbers = [...h.rec.text(a.sessionId).matchAll(/a-(\d+)\r\n/g)].map((m) => Number(m[1]));
    expect(numbers).toEqual(numbers.map((_, i) => numbers[0]! + i));
  });

  it('a hold ends with the connection that made it', async () => {
    const a = ticker('c');
    await h.host.spawn(a);
    await h.rec.waitForOutput(a.sessionId, /c-2\r\n/);
    const other = await PtyHostClient.connect(h.socketPath);
    other.pauseSession(a.sessionId, true);
    await sleep(200);
    expect(await grows(a.sessionId)).toBe(false);
    await other.close();
    await vi.waitFor(async () => expect(await grows(a.sessionId, 200)).toBe(true), WAIT);
  });

  it('answers a resize once applied, refuses one for a session it does not run, and reports input it cannot write', async () => {
    const a = ticker('d');
    await h.host.spawn(a);
    const resize = (id: string) => new Promise<string | undefined>((resolve) => h.host.resize(id, 100, 30, resolve));
    expect(await resize(a.sessionId)).toBeUndefined();
    expect((await h.host.list()).find((i) => i.sessionId === a.sessionId)).toMatchObject({ cols: 100, rows: 30 });
    expect(await resize(randomUUID())).toMatch(/not running on the PTY host/);
    const failures: string[] = [];
    h.host.write(randomUUID(), new TextEncoder().encode('x'), (m) => failures.push(m));
    await vi.waitFor(() => expect(failures).toEqual([expect.stringMatching(/^input not written: the session is not running/)]), WAIT);
  });
});

describe('the router side against a host without the features', () => {
  it('pauses every session (stops reading) while any one is held, and sends no flow, rid or wid', async () => {
    const { client, sent, state } = fakeHost(undefined);
    client.pauseSession('s1', true);
    expect(state.paused).toBe(true);
    client.pauseSession('s2', true);
    client.pauseSession('s1', false);
    expect(state.paused).toBe(true);
    client.pauseSession('s2', false);
    expect(state.paused).toBe(false);
    const answers: Array<string | undefined> = [];
    client.resize('s1', 90, 20, (error) => answers.push(error));
    expect(answers).toEqual([undefined]);
    client.write('s1', new Uint8Array([1]), () => undefined);
    expect(sent).toEqual([
      { t: 'resize', sessionId: 's1', cols: 90, rows: 20 },
      { t: 'write', sessionId: 's1', data: new Uint8Array([1]) },
    ]);
  });

  it('with them, holds one session by message and keeps reading', () => {
    const { client, sent, state } = fakeHost(['session_flow', 'resize_reply', 'write_failures']);
    client.pauseSession('s1', true);
    client.pauseSession('s1', true);
    expect(state.paused).toBe(false);
    expect(sent).toEqual([{ t: 'flow', sessionId: 's1', paused: true }]);
  });
});

describe.each(['tmux', 'screen'] as const)('%s sessions', (backend) => {
  const h = useHost(`pty-ws-${backend}-flow-`);

  it('take input, answer a resize, and pause and resume (their multiplexer client is what pauses)', async () => {
    const sessionId = randomUUID();
    h.started.push(sessionId);
    const argv = ['/bin/sh', '-c', 'i=0; while :; do i=$((i+1)); echo m-$i; sleep 0.05; done'];
    await h.host.spawn({ sessionId, backend, argv, cwd: h.dir, env: { PATH: '/usr/bin:/bin', HOME: h.dir, LANG: 'C.UTF-8' }, cols: 80, rows: 24 });
    await h.rec.waitForOutput(sessionId, /m-2/);
    expect(await new Promise<string | undefined>((resolve) => h.host.resize(sessionId, 90, 20, resolve))).toBeUndefined();
    const failures: string[] = [];
    h.host.write(sessionId, new TextEncoder().encode('x'), (m) => failures.push(m));

    h.host.pauseSession(sessionId, true);
    await sleep(300);
    const before = h.rec.text(sessionId).length;
    await sleep(400);
    expect(h.rec.text(sessionId).length).toBe(before);
    h.host.pauseSession(sessionId, false);
    await vi.waitFor(() => expect(h.rec.text(sessionId).length).toBeGreaterThan(before), WAIT);
    expect(failures).toEqual([]);
  });
});
