// A session's PTY events as the hub queues them (src/hub/pty-events.ts): a flooding session's
// backlog is handled a slice per event-loop turn, so another session's output queued behind it in
// the same turn goes out after the first slice, not after the whole backlog.
import { describe, expect, it } from 'vitest';
import { PtyEventQueue } from '../../src/hub/pty-events.ts';

const FRAME = 64 * 1024;
const turn = () => new Promise((r) => setImmediate(r));

describe('PTY event queue', () => {
  it('handles a flooding session a slice per turn, round-robin with another session', async () => {
    const emitted: string[] = [];
    const handled: string[] = [];
    const queue = (name: string) =>
      new PtyEventQueue(
        ({ data }, n) => emitted.push(`${name}${n}:${data.byteLength}`),
        FRAME,
        (n) => handled.push(`${name}${n}`),
      );
    const a = queue('a');
    const b = queue('b');
    // Four full frames of A arrive before B's one keystroke echo, within one turn.
    for (let n = 1; n <= 4; n++) a.output(new Uint8Array(FRAME), n);
    b.output(new Uint8Array(1), 5);
    await turn();
    expect(emitted).toEqual(['a1:65536', 'b5:1']);
    // Each slice acknowledges what it handled, so the host's credit for A comes back as it goes.
    expect(handled).toEqual(['a1', 'b5']);
    for (let i = 0; i < 3; i++) await turn();
    expect(emitted).toEqual(['a1:65536', 'b5:1', 'a2:65536', 'a3:65536', 'a4:65536']);
    expect(handled).toEqual(['a1', 'b5', 'a2', 'a3', 'a4']);
  });

  it('merges what arrives within a turn into frames, and drain() still handles everything at once', () => {
    const emitted: number[] = [];
    const q = new PtyEventQueue(({ data }) => emitted.push(data.byteLength), FRAME);
    for (let i = 0; i < 10; i++) q.output(new Uint8Array(FRAME / 4));
    q.drain();
    expect(emitted).toEqual([FRAME, FRAME, FRAME / 2]);
  });

  it('runs other events in order with the output, and holds everything while held', async () => {
    const seen: string[] = [];
    const q = new PtyEventQueue(({ data }) => seen.push(`out ${data.byteLength}`), FRAME);
    q.hold();
    q.output(new Uint8Array(3));
    q.event(() => seen.push('resize'));
    q.output(new Uint8Array(5));
    await turn();
    expect(seen).toEqual([]);
    q.release();
    expect(seen).toEqual(['out 3', 'resize', 'out 5']);
  });
});
