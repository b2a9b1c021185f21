// The PTY host's request replies (docs/protocol.md §9.2): a resize is answered once applied or
// refused, and input that cannot be written is reported. Then the router's side of the credit
// loop against a host without `session_credit` (an older host): it runs the loop itself and stops
// reading the link while a session is out of credit, and asks nothing the host would not answer.
// Last, multiplexer sessions held by the credit loop (their multiplexer client is what pauses).
// The loop itself over a real host: test/pty-host/pty-host-window.test.ts.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { encodeFrame } from '../../pty/wire/protocol.ts';
import { PtyHostClient } from '../../src/adapter/node/pty-host-client.ts';
import { CREDIT_HIGH_BYTES, CREDIT_LOW_BYTES } from '../../src/core/flow-budget.ts';
import type { SpawnSpec } from '../../src/ports/pty-host.ts';
import { fakeHost } from '../helpers/fake-pty-host.ts';
import { useHost, WAIT } from '../helpers/pty-host.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('pty host flow and replies', () => {
  const h = useHost('pty-ws-host-flow-');

  function ticker(name: string): SpawnSpec {
    const sessionId = randomUUID();
    h.started.push(sessionId);
    const argv = ['/bin/sh', '-c', `i=0; while :; do i=$((i+1)); echo ${name}-$i; sleep 0.02; done`];
    return { sessionId, backend: 'native', argv, cwd: h.dir, env: { PATH: '/usr/bin:/bin', HOME: h.dir }, cols: 80, rows: 24 };
  }

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
  it('runs the credit loop itself: stops reading while a session is out of credit, and sends no credit, rid or wid', () => {
    const { client, sent, state, hostSends } = fakeHost(['session_flow', 'session_window']);
    client.startEvents(undefined, true);
    const data = (sessionId: string, bytes: number) => hostSends(encodeFrame({ t: 'data', sessionId, n: 1, data: new Uint8Array(bytes) }));
    data('s1', CREDIT_HIGH_BYTES);
    expect(state.paused).toBe(false);
    data('s1', 1);
    expect(state.paused).toBe(true);
    client.credit('s1', CREDIT_HIGH_BYTES + 1 - CREDIT_LOW_BYTES - 1);
    expect(state.paused).toBe(true);
    client.credit('s1', 1);
    expect(state.paused).toBe(false);
    const answers: Array<string | undefined> = [];
    client.resize('s1', 90, 20, (error) => answers.push(error));
    expect(answers).toEqual([undefined]);
    client.write('s1', new Uint8Array([1]), () => undefined);
    expect(sent).toEqual([
      { t: 'events' },
      { t: 'resize', sessionId: 's1', cols: 90, rows: 20 },
      { t: 'write', sessionId: 's1', data: new Uint8Array([1]) },
    ]);
  });

  it('with session_credit, asks the host to run the loop, gives credit back by message and keeps reading', async () => {
    const { client, sent, state, hostSends } = fakeHost(['session_credit', 'resize_reply', 'write_failures']);
    client.startEvents(undefined, true);
    hostSends(encodeFrame({ t: 'data', sessionId: 's1', n: 1, data: new Uint8Array(2 * CREDIT_HIGH_BYTES) }));
    expect(state.paused).toBe(false);
    client.credit('s1', 100);
    client.credit('s1', 50);
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([{ t: 'events', credit: true }, { t: 'credit', sessionId: 's1', bytes: 150 }]);
  });
});

describe.each(['tmux', 'screen'] as const)('%s sessions', (backend) => {
  const h = useHost(`pty-ws-${backend}-flow-`);

  it('take input, answer a resize, and are held by the credit loop (their multiplexer client is what pauses)', async () => {
    const sessionId = randomUUID();
    h.started.push(sessionId);
    const argv = ['/bin/sh', '-c', 'i=0; while :; do i=$((i+1)); echo m-$i; sleep 0.05; done'];
    await h.host.spawn({ sessionId, backend, argv, cwd: h.dir, env: { PATH: '/usr/bin:/bin', HOME: h.dir, LANG: 'C.UTF-8' }, cols: 80, rows: 24 });
    await h.rec.waitForOutput(sessionId, /m-2/);
    expect(await new Promise<string | undefined>((resolve) => h.host.resize(sessionId, 90, 20, resolve))).toBeUndefined();
    const failures: string[] = [];
    h.host.write(sessionId, new TextEncoder().encode('x'), (m) => failures.push(m));

    // A second router that takes nothing of a flooding session: its credit loop holds it.
    const flood = randomUUID();
    h.started.push(flood);
    const other = await PtyHostClient.connect(h.socketPath);
    let taken = 0;
    other.subscribe({ onData: (id, data) => void (id === flood && (taken += data.byteLength)), onExit: () => undefined });
    try {
      other.startEvents(undefined, true);
      const argv = ['/bin/sh', '-c', 'exec yes 0123456789abcdefghijklmnopqrstuvwxyz'];
      await h.host.spawn({ sessionId: flood, backend, argv, cwd: h.dir, env: { PATH: '/usr/bin:/bin', HOME: h.dir, LANG: 'C.UTF-8' }, cols: 80, rows: 24 });
      await vi.waitFor(() => expect(taken).toBeGreaterThan(CREDIT_HIGH_BYTES), { timeout: 15_000, interval: 20 });
      await sleep(300);
      const before = h.rec.text(flood).length;
      await sleep(400);
      expect(h.rec.text(flood).length).toBe(before);
      other.credit(flood, taken);
      await vi.waitFor(() => expect(h.rec.text(flood).length).toBeGreaterThan(before), WAIT);
    } finally {
      await other.close();
    }
    expect(failures).toEqual([]);
  });
});
