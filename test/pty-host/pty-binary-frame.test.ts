// The binary form of `write` and `data` on the PTY host socket (pty/wire/binary-frame.ts,
// docs/protocol.md §9.1): it decodes to what the JSON form decodes to, mixes with JSON frames in
// one stream, falls back to JSON for what it cannot carry, and a malformed or misdirected one is a
// ProtocolError, never a crash or a message for the wrong session.
import { describe, expect, it } from 'vitest';
import { BINARY_DATA, BINARY_HEAD_BYTES, BINARY_WRITE, encodeBinaryFrame, encodeDataFrame, encodeWriteFrame } from '../../pty/wire/binary-frame.ts';
import { FrameDecoder } from '../../pty/wire/frame-decoder.ts';
import { encodeFrame, HostMessageSchema, ProtocolError, RequestSchema, type HostMessage, type Request } from '../../pty/wire/protocol.ts';

const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);

function drain<T>(decoder: { next(): T | undefined }): T[] {
  const out: T[] = [];
  for (let msg = decoder.next(); msg; msg = decoder.next()) out.push(msg);
  return out;
}

function decodeOne<T>(decoder: FrameDecoder<typeof RequestSchema | typeof HostMessageSchema>, frame: Uint8Array): T {
  decoder.push(frame);
  const [msg, ...rest] = drain(decoder);
  expect(rest).toEqual([]);
  return msg as T;
}

/** The tag word where a JSON frame holds its header length. */
const tagOf = (frame: Uint8Array) => new DataView(frame.buffer, frame.byteOffset).getUint32(4);

/** Deterministic pseudo-random numbers, so a failure is reproducible. */
function rng(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31);
}

describe('binary write and data frames', () => {
  const writes: Request[] = [
    { t: 'write', sessionId: 's1', data: allBytes },
    { t: 'write', sessionId: 's1', data: new Uint8Array([0x71]), wid: 7 },
    { t: 'write', sessionId: 'sitzung-ü-✓', data: new Uint8Array(0), wid: 0 },
    { t: 'write', sessionId: '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0', data: allBytes, wid: Number.MAX_SAFE_INTEGER },
  ];

  it('decode to what the JSON form decodes to, mixed with JSON frames in one stream', () => {
    const toHost = new FrameDecoder(RequestSchema);
    const stream: Request[] = [{ t: 'list', rid: 1 }, ...writes, { t: 'kill', sessionId: 's1' }];
    for (const msg of stream) {
      const frame = msg.t === 'write' ? encodeWriteFrame(msg) : encodeFrame(msg);
      expect(tagOf(frame) === BINARY_WRITE).toBe(msg.t === 'write');
      toHost.push(frame);
    }
    expect(drain(toHost)).toEqual(stream);

    const data: HostMessage[] = [
      { t: 'data', sessionId: 's1', n: 1, data: allBytes },
      { t: 'exit', sessionId: 's1', n: 2, exitCode: 0, signal: null },
      { t: 'data', sessionId: 's2', n: 3, data: new Uint8Array([1]) },
    ];
    const toRouter = new FrameDecoder(HostMessageSchema);
    for (const msg of data) toRouter.push(msg.t === 'data' ? encodeDataFrame(msg.sessionId, msg.n, [msg.data.subarray(0, 10), msg.data.subarray(10)]) : encodeFrame(msg));
    expect(drain(toRouter)).toEqual(data);
  });

  it('reassemble from one-byte pieces, and hand the body on as a view of the frame', () => {
    const frame = encodeWriteFrame({ t: 'write', sessionId: 's1', data: allBytes, wid: 3 });
    const decoder = new FrameDecoder(RequestSchema);
    const decoded: Request[] = [];
    for (let i = 0; i < frame.byteLength; i++) {
      decoder.push(frame.subarray(i, i + 1));
      decoded.push(...drain(decoder));
    }
    expect(decoded).toEqual([{ t: 'write', sessionId: 's1', data: allBytes, wid: 3 }]);

    const whole = decodeOne<Request>(new FrameDecoder(RequestSchema), frame);
    expect(whole.t === 'write' && whole.data.buffer).toBe(frame.buffer);
  });

  it('fall back to the JSON form for what they cannot carry', () => {
    const longId = 'x'.repeat(70_000);
    for (const frame of [
      encodeWriteFrame({ t: 'write', sessionId: longId, data: allBytes }),
      encodeWriteFrame({ t: 'write', sessionId: 's', data: allBytes, wid: -1 }),
      encodeDataFrame(longId, 5, [allBytes, allBytes]),
    ]) {
      expect(tagOf(frame)).toBeLessThan(0xffff_ff00);
    }
    expect(decodeOne(new FrameDecoder(HostMessageSchema), encodeDataFrame(longId, 5, [allBytes, allBytes]))).toEqual({
      t: 'data',
      sessionId: longId,
      n: 5,
      data: Uint8Array.from([...allBytes, ...allBytes]),
    });
  });

  it('are refused the wrong way round: a data frame to the host, a write to the router', () => {
    const toHost = new FrameDecoder(RequestSchema);
    toHost.push(encodeDataFrame('s1', 1, [allBytes]));
    expect(() => toHost.next()).toThrow(/wrong way/);
    const toRouter = new FrameDecoder(HostMessageSchema);
    toRouter.push(encodeWriteFrame({ t: 'write', sessionId: 's1', data: allBytes }));
    expect(() => toRouter.next()).toThrow(/wrong way/);
  });

  /** A valid write frame with one change made to it. */
  function mutated(change: (frame: Uint8Array, view: DataView) => void): Uint8Array {
    const frame = encodeBinaryFrame(BINARY_WRITE, 'abc', 9, new Uint8Array([1, 2, 3]))!;
    change(frame, new DataView(frame.buffer));
    return frame;
  }

  it.each([
    ['an unknown kind', mutated((_, v) => v.setUint32(4, 0xffff_ff03))],
    ['unknown flags', mutated((f) => (f[8] = 3))],
    ['a reserved byte set', mutated((f) => (f[9] = 1))],
    ['an empty session id', mutated((_, v) => v.setUint16(10, 0))],
    ['a session id overrunning the frame', mutated((_, v) => v.setUint16(10, 100))],
    ['a fractional number', mutated((_, v) => v.setFloat64(12, 1.5))],
    ['a negative number', mutated((_, v) => v.setFloat64(12, -1))],
    ['a NaN number', mutated((_, v) => v.setFloat64(12, Number.NaN))],
    ['an unsafe number', mutated((_, v) => v.setFloat64(12, 2 ** 60))],
    ['a number without its flag', mutated((f) => (f[8] = 0))],
    ['a session id that is not UTF-8', mutated((f) => (f[BINARY_HEAD_BYTES] = 0xff))],
    ['a frame too short for the fixed header', (() => {
      const f = new Uint8Array(12);
      const v = new DataView(f.buffer);
      v.setUint32(0, 8);
      v.setUint32(4, BINARY_WRITE);
      return f;
    })()],
  ])('a frame with %s is a ProtocolError', (_name, frame) => {
    const decoder = new FrameDecoder(RequestSchema);
    decoder.push(frame);
    expect(() => decoder.next()).toThrow(ProtocolError);
    // and the decoder stays failed
    decoder.push(encodeFrame({ t: 'list', rid: 1 }));
    expect(() => decoder.next()).toThrow(ProtocolError);
  });

  it('survive random damage: a ProtocolError or a well-formed message, nothing else', () => {
    const random = rng(20);
    const originals = [
      encodeBinaryFrame(BINARY_DATA, 'session-1', 42, allBytes.subarray(0, 40))!,
      encodeBinaryFrame(BINARY_DATA, 'ü', undefined, new Uint8Array(0))!,
      encodeBinaryFrame(BINARY_WRITE, 'session-1', 42, allBytes.subarray(0, 40))!,
    ];
    let refused = 0;
    let decoded = 0;
    for (let round = 0; round < 5000; round++) {
      const frame = originals[round % originals.length]!.slice();
      for (let k = 1 + (random() % 4); k > 0; k--) frame[random() % Math.min(frame.byteLength, 40)] = random() % 256;
      // Half of the rounds keep a consistent length prefix, so the damage reaches the fixed header.
      if (round % 2 === 0) new DataView(frame.buffer).setUint32(0, frame.byteLength - 4);
      for (const schema of [RequestSchema, HostMessageSchema]) {
        const decoder = new FrameDecoder(schema, 1024);
        decoder.push(frame);
        let msg: Request | HostMessage | undefined;
        try {
          msg = decoder.next();
        } catch (err) {
          expect(err).toBeInstanceOf(ProtocolError);
          refused++;
          continue;
        }
        if (!msg) continue; // a length prefix asking for more bytes: the frame is not whole yet
        decoded++;
        // Whatever decodes is a message this direction may carry, with a usable session and body.
        if (msg.t === 'write' || msg.t === 'data') {
          expect(schema === RequestSchema ? 'write' : 'data').toBe(msg.t);
          expect(typeof msg.sessionId === 'string' && msg.sessionId.length > 0).toBe(true);
          expect(msg.data).toBeInstanceOf(Uint8Array);
          const num = msg.t === 'write' ? msg.wid : msg.n;
          if (num !== undefined) expect(Number.isSafeInteger(num) && num >= 0).toBe(true);
        }
      }
    }
    expect(refused).toBeGreaterThan(1000);
    expect(decoded).toBeGreaterThan(0);
  });
});
