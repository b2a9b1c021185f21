// The router reads the PTY host socket into one buffer it reuses (src/adapter/node/pty-host-client.ts,
// docs/performance.md "Fewer buffers per output byte"): the decoder (FrameDecoder.each), the hub's
// queue (src/hub/gathered-output.ts) and the Output frame's PW1O form must copy what they keep and
// no more. Each test overwrites the memory it handed over, as the next read would.
import { describe, expect, it } from 'vitest';
import { PtyHostConnection, type HostSocket, type HostSocketEvents } from '../../src/host-link/client.ts';
import { encodeDataFrame } from '../../pty/wire/binary-frame.ts';
import { FrameDecoder } from '../../pty/wire/frame-decoder.ts';
import { encodeFrame, HostMessageSchema, PROTOCOL_VERSION, type HostMessage } from '../../pty/wire/protocol.ts';
import { concatBytes } from '../../src/core/bytes.ts';
import { PtyEventQueue } from '../../src/hub/pty-events.ts';
import { GatheredOutput } from '../../src/hub/gathered-output.ts';
import { encodeOutputFrame, OUTPUT_HEAD_BYTES } from '../../src/protocol/binary.ts';
import { OutputFrame } from '../../src/protocol/output-frame.ts';

/** Deterministic pseudo-random numbers, so a failure is reproducible. */
function rng(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31);
}

const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

/** `stream` handed over in chunks of random sizes, each through the same buffer, scribbled over after each call. */
function throughOneBuffer(stream: Uint8Array, random: () => number, deliver: (chunk: Uint8Array) => void, maxChunk: number): void {
  const buffer = new Uint8Array(maxChunk);
  for (let at = 0; at < stream.byteLength; ) {
    const n = Math.min(stream.byteLength - at, 1 + (random() % maxChunk));
    buffer.set(stream.subarray(at, at + n));
    deliver(buffer.subarray(0, n));
    buffer.fill(0xee);
    at += n;
  }
}

/** A message with its body as base64: compared as text, which is quick for large bodies. */
const shown = (m: HostMessage) => ('data' in m ? { ...m, data: Buffer.from(m.data).toString('base64') } : m);


describe('reading the host socket into one reused buffer', () => {
  const messages: Extract<HostMessage, { t: 'data' | 'exit' }>[] = [
    { t: 'data', sessionId: 's1', n: 1, data: bytes(5, 1) },
    { t: 'exit', sessionId: 's2', exitCode: 0, signal: null, n: 2 },
    { t: 'data', sessionId: 's1', n: 3, data: bytes(20_000, 2) },
    { t: 'data', sessionId: 's2', data: bytes(1, 3) },
    { t: 'data', sessionId: 's1', n: 4, data: bytes(140_000, 4) },
    { t: 'data', sessionId: 's2', n: 5, data: bytes(4096, 5) },
  ];
  // Binary and JSON frames mixed, as a host sends them (the one-byte data goes in JSON form).
  const frame = (m: HostMessage) => (m.t === 'data' && m.data.byteLength > 1 ? encodeDataFrame(m.sessionId, m.n, [m.data]) : encodeFrame(m));
  const stream = concatBytes([...messages, ...messages].map(frame));

  it('decodes every message whole, with frames split anywhere, though each chunk is overwritten after its call', () => {
    // Byte by byte through the small messages; in larger pieces through all of them.
    const small = messages.filter((m) => m.t !== 'data' || m.data.byteLength < 5000);
    for (const [maxChunk, sent] of [[1, small], [7, small], [64, messages], [4096, messages], [65_536, messages]] as const) {
      const decoder = new FrameDecoder(HostMessageSchema);
      const got: unknown[] = [];
      // A handler that keeps a message copies its body (here: to text), as the connection's listeners do.
      throughOneBuffer(concatBytes([...sent, ...sent].map(frame)), rng(maxChunk), (chunk) => decoder.each(chunk, (m) => got.push(shown(m))), maxChunk);
      expect(got).toEqual([...sent, ...sent].map(shown));
    }
  });

  it('gives the connection listeners every byte, in order, through a socket that reads into one buffer', () => {
    let events: HostSocketEvents | undefined;
    const socket: HostSocket = { write: () => undefined, end: () => undefined, destroy: () => undefined, writable: true, closed: false, pause: () => undefined, resume: () => undefined, listen: (e) => void (events = e) };
    const client = new PtyHostConnection(socket);
    const seen: string[] = [];
    const output = new Map<string, Uint8Array[]>();
    client.subscribe({
      onData: (id, data, n) => {
        seen.push(`data ${id} ${n}`);
        output.set(id, [...(output.get(id) ?? []), data.slice()]);
      },
      onExit: (id, exit, n) => seen.push(`exit ${id} ${exit.exitCode} ${n}`),
    });
    const hello = encodeFrame({ t: 'hello', protocol: PROTOCOL_VERSION, pid: 1, backends: ['native'], features: ['binary_data'] });
    throughOneBuffer(concatBytes([hello, stream]), rng(9), (chunk) => events!.data(chunk), 65_536);
    const expected = [...messages, ...messages];
    expect(seen).toEqual(expected.map((m) => (m.t === 'data' ? `data ${m.sessionId} ${m.n}` : `exit ${m.sessionId} 0 2`)));
    for (const id of ['s1', 's2']) {
      const sent = concatBytes(expected.flatMap((m) => (m.t === 'data' && m.sessionId === id ? [m.data] : [])));
      expect(Buffer.from(concatBytes(output.get(id)!)).equals(sent)).toBe(true);
    }
  });
});

describe('output gathered for a frame', () => {
  it('copies what it is given: the caller may overwrite it at once', () => {
    const emitted: Uint8Array[] = [];
    const q = new PtyEventQueue(({ data }) => emitted.push(data), 64 * 1024);
    const read = new Uint8Array(100);
    for (let i = 0; i < 5; i++) {
      read.fill(0x61 + i);
      q.output(read.subarray(0, 10 + i));
      read.fill(0xee);
    }
    q.drain();
    expect(emitted.map((d) => new TextDecoder().decode(d))).toEqual(['a'.repeat(10) + 'b'.repeat(11) + 'c'.repeat(12) + 'd'.repeat(13) + 'e'.repeat(14)]);
  });

  it('keeps room for the PW1O head before the bytes, in the same memory, and trims a buffer that grew well past them', () => {
    const one = new GatheredOutput(bytes(1000, 1)).take();
    expect(one.data).toEqual(bytes(1000, 1));
    expect(one.framed.buffer).toBe(one.data.buffer);
    expect(one.data.byteOffset - one.framed.byteOffset).toBe(OUTPUT_HEAD_BYTES);
    expect(one.framed.buffer.byteLength).toBe(OUTPUT_HEAD_BYTES + 1000);

    const grown = new GatheredOutput(bytes(1000, 1));
    grown.add(bytes(10, 2)); // doubles to 2000: half of it would sit unused behind a kept frame
    const taken = grown.take();
    expect(taken.data).toEqual(concatBytes([bytes(1000, 1), bytes(10, 2)]));
    expect(taken.framed.buffer.byteLength).toBe(OUTPUT_HEAD_BYTES + 1010);
    expect(taken.data.byteOffset - taken.framed.byteOffset).toBe(OUTPUT_HEAD_BYTES);
  });

  it("becomes its PW1O frame in place: the same bytes as a frame encoded on its own, in the output's own memory", () => {
    const { data, framed } = new GatheredOutput(bytes(3000, 7)).take();
    const frame = new OutputFrame('id', 4242, 0, data, framed);
    expect(frame.binary).toEqual(encodeOutputFrame(4242, bytes(3000, 7)));
    expect(frame.binary.buffer).toBe(data.buffer);
    expect(frame.data).toEqual(bytes(3000, 7));
    // Without the room, the frame is a copy and the bytes are left alone.
    const plain = new OutputFrame('id', 4242, 0, bytes(3000, 7));
    expect(plain.binary).toEqual(frame.binary);
    expect(plain.binary.buffer).not.toBe(plain.data.buffer);
  });
});
