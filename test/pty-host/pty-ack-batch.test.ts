// What the router returns to the PTY host goes out once per event-loop turn, all in one write
// (src/host-link/ack-batch.ts): durability acks, the highest per session, and the credit loop's credit, the
// sum per session, as separate messages. Under a flood the hub returns hundreds of slices a
// second, and each alone would be a socket write and a wake-up of the host.
import { describe, expect, it } from 'vitest';
import { AckBatch } from '../../src/host-link/ack-batch.ts';
import { FrameDecoder } from '../../pty/wire/frame-decoder.ts';
import { RequestSchema, type Request } from '../../pty/wire/protocol.ts';

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

  it("sends the turn's credit, summed per session, beside the acks and apart from them", async () => {
    const writes: Uint8Array[] = [];
    const returns = new AckBatch((b) => writes.push(b));
    returns.credit('a', 100);
    returns.add('a', 5);
    returns.credit('a', 20);
    returns.credit('b', 7);
    returns.credit('b', 0);
    await turn();
    expect(decode(writes)).toEqual([
      [
        { t: 'ack', sessionId: 'a', n: 5 },
        { t: 'credit', sessionId: 'a', bytes: 120 },
        { t: 'credit', sessionId: 'b', bytes: 7 },
      ],
    ]);
  });
});
