import { describe, expect, it } from 'vitest';
import { FrameDecoder } from '../../pty/wire/frame-decoder.ts';
import {
  HostMessageSchema,
  MAX_FRAME_BYTES,
  ProtocolError,
  RequestSchema,
  encodeFrame,
  type HostMessage,
  type Request,
} from '../../pty/wire/protocol.ts';

const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);

const requests: Request[] = [
  {
    t: 'spawn',
    rid: 1,
    spec: { sessionId: 's1', backend: 'native', argv: ['/bin/sh', '-c', 'echo "ü ✓"'], cwd: '/tmp', env: { PATH: '/bin', X: '' }, cols: 80, rows: 24 },
  },
  { t: 'list', rid: 2 },
  { t: 'events' },
  { t: 'write', sessionId: 's1', data: allBytes },
  { t: 'write', sessionId: 's1', data: new Uint8Array(0) },
  { t: 'resize', sessionId: 's1', cols: 132, rows: 43 },
  { t: 'kill', sessionId: 's1' },
  { t: 'kill', sessionId: 's1', signal: 'SIGTERM' },
];

const hostMessages: HostMessage[] = [
  { t: 'hello', protocol: 2, pid: 42, backends: ['native', 'tmux'] },
  { t: 'spawned', rid: 1, pid: 4242 },
  { t: 'listed', rid: 2, sessions: [{ sessionId: 's1', backend: 'tmux', pid: 4242, cols: 80, rows: 24 }] },
  { t: 'failed', rid: 3, code: 'not_found', message: 'program not found on PATH: nope' },
  { t: 'failed', rid: 4, code: 'backend_unavailable', message: 'backend "zellij" is not available on this PTY host' },
  { t: 'data', sessionId: 's1', data: allBytes },
  { t: 'exit', sessionId: 's1', exitCode: 3, signal: null },
  { t: 'exit', sessionId: 's1', exitCode: null, signal: 9 },
];

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

function drain<T>(decoder: { next(): T | undefined }): T[] {
  const out: T[] = [];
  for (let msg = decoder.next(); msg; msg = decoder.next()) out.push(msg);
  return out;
}

/** Deterministic split points, so a failure is reproducible. */
function* splits(bytes: Uint8Array, seed: number, maxPiece: number): Generator<Uint8Array> {
  let state = seed;
  for (let offset = 0; offset < bytes.byteLength; ) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const size = 1 + (state % maxPiece);
    yield bytes.subarray(offset, offset + size);
    offset += size;
  }
}

/** A frame with the given header text and body, bypassing encodeFrame's checks. */
function rawFrame(header: string, body = new Uint8Array(0)): Uint8Array {
  const headerBytes = new TextEncoder().encode(header);
  const frame = new Uint8Array(8 + headerBytes.byteLength + body.byteLength);
  const view = new DataView(frame.buffer);
  view.setUint32(0, frame.byteLength - 4);
  view.setUint32(4, headerBytes.byteLength);
  frame.set(headerBytes, 8);
  frame.set(body, 8 + headerBytes.byteLength);
  return frame;
}

describe('pty protocol codec', () => {
  it('round-trips every request and host message', () => {
    const toHost = new FrameDecoder(RequestSchema);
    for (const msg of requests) toHost.push(encodeFrame(msg));
    expect(drain(toHost)).toEqual(requests);

    const toRouter = new FrameDecoder(HostMessageSchema);
    for (const msg of hostMessages) toRouter.push(encodeFrame(msg));
    expect(drain(toRouter)).toEqual(hostMessages);
  });

  it('reassembles frames from arbitrary chunk splits', () => {
    const stream = concat(hostMessages.map(encodeFrame));
    for (const [seed, maxPiece] of [[1, 7], [2, 64], [3, 300], [4, 5000]] as const) {
      const decoder = new FrameDecoder(HostMessageSchema);
      const decoded: HostMessage[] = [];
      for (const piece of splits(stream, seed, maxPiece)) {
        decoder.push(piece);
        decoded.push(...drain(decoder));
      }
      expect(decoded).toEqual(hostMessages);
    }
  });

  it('reassembles frames fed one byte at a time', () => {
    const stream = concat(requests.map(encodeFrame));
    const decoder = new FrameDecoder(RequestSchema);
    const decoded: Request[] = [];
    for (let i = 0; i < stream.byteLength; i++) {
      decoder.push(stream.subarray(i, i + 1));
      decoded.push(...drain(decoder));
    }
    expect(decoded).toEqual(requests);
  });

  it('carries a body of a megabyte intact', () => {
    const data = Uint8Array.from({ length: 1024 * 1024 }, (_, i) => (i * 7) & 0xff);
    const decoder = new FrameDecoder(RequestSchema);
    for (const piece of splits(encodeFrame({ t: 'write', sessionId: 'big', data }), 9, 65536)) decoder.push(piece);
    const [msg, ...rest] = drain(decoder);
    expect(rest).toEqual([]);
    expect(msg?.t === 'write' && Buffer.from(msg.data).equals(data)).toBe(true);
  });

  it('rejects an oversize frame from its length prefix alone', () => {
    const prefix = new Uint8Array(4);
    new DataView(prefix.buffer).setUint32(0, MAX_FRAME_BYTES + 1);
    const decoder = new FrameDecoder(RequestSchema);
    decoder.push(prefix);
    expect(() => decoder.next()).toThrow(ProtocolError);

    const small = new FrameDecoder(RequestSchema, 100);
    small.push(encodeFrame({ t: 'write', sessionId: 's', data: new Uint8Array(200) }));
    expect(() => small.next()).toThrow(/exceeds 100/);
  });

  it('refuses to encode an oversize frame', () => {
    expect(() => encodeFrame({ t: 'write', sessionId: 's', data: new Uint8Array(MAX_FRAME_BYTES) })).toThrow(RangeError);
  });

  it('rejects text that is not a frame', () => {
    const decoder = new FrameDecoder(RequestSchema);
    decoder.push(new TextEncoder().encode('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(() => decoder.next()).toThrow(ProtocolError);
  });

  it.each([
    ['invalid JSON', rawFrame('{"t":"list",')],
    ['a JSON array', rawFrame('[1,2]')],
    ['an unknown message type', rawFrame('{"t":"format_disk","rid":1}')],
    ['a missing field', rawFrame('{"t":"resize","sessionId":"s","cols":80}')],
    ['a wrongly typed field', rawFrame('{"t":"list","rid":"1"}')],
    ['a fractional rid', rawFrame('{"t":"list","rid":1.5}')],
    ['an empty argv', rawFrame('{"t":"spawn","rid":1,"spec":{"sessionId":"s","backend":"native","argv":[],"cwd":"/","env":{},"cols":1,"rows":1}}')],
    ['a body on a message without one', rawFrame('{"t":"list","rid":1}', new Uint8Array([1]))],
    ['a host message sent to the host', rawFrame('{"t":"exit","sessionId":"s","exitCode":0,"signal":null}')],
    ['invalid UTF-8', rawFrame('{"t":"list","rid":1}').map((b, i) => (i === 12 ? 0xff : b))],
  ])('rejects a frame with %s', (_name, frame) => {
    const decoder = new FrameDecoder(RequestSchema);
    decoder.push(frame);
    expect(() => decoder.next()).toThrow(ProtocolError);
  });

  it('rejects a header length that overruns its frame', () => {
    const frame = rawFrame('{"t":"list","rid":1}');
    new DataView(frame.buffer).setUint32(4, 1000);
    const decoder = new FrameDecoder(RequestSchema);
    decoder.push(frame);
    expect(() => decoder.next()).toThrow(/overruns/);
  });

  it('stays failed after a protocol error', () => {
    const decoder = new FrameDecoder(RequestSchema);
    decoder.push(rawFrame('nope'));
    expect(() => decoder.next()).toThrow(ProtocolError);
    decoder.push(encodeFrame({ t: 'list', rid: 1 }));
    expect(() => decoder.next()).toThrow(ProtocolError);
  });

  it('decodes the messages that precede a bad frame', () => {
    const decoder = new FrameDecoder(RequestSchema);
    decoder.push(concat([encodeFrame({ t: 'list', rid: 1 }), rawFrame('garbage')]));
    expect(decoder.next()).toEqual({ t: 'list', rid: 1 });
    expect(() => decoder.next()).toThrow(ProtocolError);
  });
});
