// The host link's two sizes agree (src/core/flow-budget.ts): the host's largest output frame and the
// router's read. Under a flood the link holds the host's frames back to back and each read takes
// LINK_READ_BYTES of them into one reused buffer (src/adapter/node/pty-host-client.ts); most frames
// must arrive whole, decoded in place, and a frame a read boundary cuts is copied once, not twice
// (pty/wire/frame-decoder.ts, counted by its `stats`).
import { describe, expect, it } from 'vitest';
import { encodeDataFrame } from '../../pty/wire/binary-frame.ts';
import { FrameDecoder } from '../../pty/wire/frame-decoder.ts';
import { HostMessageSchema } from '../../pty/wire/protocol.ts';
import { LINK_READ_BYTES, OUTPUT_BATCH_MAX_BYTES, OUTPUT_FRAME_MAX_BYTES } from '../../src/core/flow-budget.ts';

const SESSION = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const FRAMES = 64;

/** The host's frames under a flood: each a full batch, its bytes telling which frame it is. */
function flood(): Uint8Array[] {
  return Array.from({ length: FRAMES }, (_, i) => encodeDataFrame(SESSION, i + 1, [new Uint8Array(OUTPUT_BATCH_MAX_BYTES).fill(i & 0xff)]));
}

/** Reads the stream as the router does: LINK_READ_BYTES at a time, into one buffer used again. */
function readAll(stream: Uint8Array, decoder: FrameDecoder<typeof HostMessageSchema>): number[] {
  const buffer = new Uint8Array(LINK_READ_BYTES);
  const got: number[] = [];
  for (let at = 0; at < stream.byteLength; at += LINK_READ_BYTES) {
    const part = stream.subarray(at, at + LINK_READ_BYTES);
    buffer.set(part);
    decoder.each(buffer.subarray(0, part.byteLength), (msg) => {
      if (msg.t !== 'data') throw new Error(`unexpected ${msg.t}`);
      expect(msg.data.byteLength).toBe(OUTPUT_BATCH_MAX_BYTES);
      expect(msg.data.every((b) => b === ((msg.n! - 1) & 0xff))).toBe(true);
      got.push(msg.n!);
    });
  }
  return got;
}

describe('the host link under a flood', () => {
  it("sends frames that fit the router's reads several times over", () => {
    const frames = flood();
    for (const f of frames) expect(f.byteLength).toBeLessThanOrEqual(OUTPUT_FRAME_MAX_BYTES);
    expect(LINK_READ_BYTES).toBeGreaterThanOrEqual(4 * OUTPUT_FRAME_MAX_BYTES);
  });

  it('delivers most frames whole, and copies a frame a read cuts once', () => {
    const frames = flood();
    const stream = new Uint8Array(frames.reduce((n, f) => n + f.byteLength, 0));
    let at = 0;
    for (const f of frames) {
      stream.set(f, at);
      at += f.byteLength;
    }
    const decoder = new FrameDecoder(HostMessageSchema);
    expect(readAll(stream, decoder)).toEqual(frames.map((_, i) => i + 1));
    const { frames: decoded, split, copiedBytes } = decoder.stats;
    expect(decoded).toBe(FRAMES);
    // A read boundary cuts at most one frame per read.
    expect(split).toBeLessThanOrEqual(Math.ceil(stream.byteLength / LINK_READ_BYTES));
    expect(split).toBeLessThan(FRAMES / 3);
    expect(copiedBytes).toBeLessThanOrEqual(split * frames[0]!.byteLength);
  });
});
