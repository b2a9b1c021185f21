// Binary hot-path frames (docs/protocol.md §2.3): PW1O output (server→client), PW1I input (client→server).

const PW1O = [0x50, 0x57, 0x31, 0x4f];
const PW1I = [0x50, 0x57, 0x31, 0x49];
const STDOUT_STREAM = 1;

/** The PW1O head's length: output bytes with this much room before them become a frame in place (writeOutputHead). */
export const OUTPUT_HEAD_BYTES = 13;

export function encodeOutputFrame(sequence: number, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(OUTPUT_HEAD_BYTES + data.byteLength);
  out.set(data, OUTPUT_HEAD_BYTES);
  return writeOutputHead(out, sequence);
}

/** Writes the PW1O head into the first OUTPUT_HEAD_BYTES of `frame`, whose output follows there, and returns `frame`: no copy. */
export function writeOutputHead(frame: Uint8Array, sequence: number): Uint8Array {
  frame.set(PW1O, 0);
  new DataView(frame.buffer, frame.byteOffset, OUTPUT_HEAD_BYTES).setBigUint64(4, BigInt(sequence), false);
  frame[12] = STDOUT_STREAM;
  return frame;
}

/** The raw input bytes of a PW1I frame, or null when the magic is wrong. */
export function decodeInputFrame(frame: Uint8Array): Uint8Array | null {
  if (frame.byteLength < 4) return null;
  for (let i = 0; i < 4; i++) if (frame[i] !== PW1I[i]) return null;
  return frame.subarray(4);
}

/** A PW1I frame carrying raw input bytes (client side). */
export function encodeInputFrame(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + data.byteLength);
  out.set(PW1I, 0);
  out.set(data, 4);
  return out;
}

/** The sequence and bytes of a PW1O frame (client side), or null when it is not one. */
export function decodeOutputFrame(frame: Uint8Array): { sequence: number; data: Uint8Array } | null {
  if (frame.byteLength < OUTPUT_HEAD_BYTES) return null;
  for (let i = 0; i < 4; i++) if (frame[i] !== PW1O[i]) return null;
  const sequence = Number(new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(4, false));
  return { sequence, data: frame.subarray(OUTPUT_HEAD_BYTES) };
}
