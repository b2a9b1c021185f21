// Acknowledgements to the PTY host go out once per event-loop turn, all in one write, the highest
// per session (pty/ack-batch.ts): under a flood the hub acknowledges hundreds of slices a second,
// and each alone would be a socket write and a wake-up of the host.
import { describe, expect, it } from 'vitest';
import { AckBatch } from '../pty/ack-batch.ts';
import { FrameDecoder } from '../pty/frame-decoder.ts';
import { RequestSchema, type Request } from '../pty/protocol.ts';

const turn = () => new Promise((r) => setImmediate(r));

function decode(writes: Uint8Array[]): Request[][] {
  return writes.map((w) => {
    const d = new FrameDecoder(RequestSchema);
    d.push(w);
    const out: Request[] = [];
    for (let m = d.next(); m; m = d.next()) out.push(m);
    return out;
  });
}

describe('ack batch', () => {
  it("sends one write per turn with each session's highest number", async () => {
    const writes: Uint8Array[] = [];
    const acks = new AckBatch((b) => writes.push(b));
    acks.add('a', 1);
    acks.add('b', 2);
    acks.add('a', 3);
    acks.add('a', 2);
    expect(writes).toEqual([]);
    await turn();
    expect(decode(writes)).toEqual([[{ t: 'ack', sessionId: 'a', n: 3 }, { t: 'ack', sessionId: 'b', n: 2 }]]);
    acks.add('b', 4);
    await turn();
    expect(decode(writes)[1]).toEqual([{ t: 'ack', sessionId: 'b', n: 4 }]);
  });

  it('flushes at once when asked (a connection closing), and then has nothing left for its turn', async () => {
    const writes: Uint8Array[] = [];
    const acks = new AckBatch((b) => writes.push(b));
    acks.add('a', 7);
    acks.flush();
    expect(decode(writes)).toEqual([[{ t: 'ack', sessionId: 'a', n: 7 }]]);
    await turn();
    expect(writes).toHaveLength(1);
  });
});
