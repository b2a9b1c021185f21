// One frame's worth of a session's output, gathered as it arrives (docs/performance.md "Fewer
// buffers per output byte"). The PTY host connection hands over bytes it will read into again
// (PtyHostListener.onData), so they are copied here once, into a buffer with room for the PW1O
// head in front: a binary client's frame is then that same memory (OutputFrame), not another copy.
import { OUTPUT_HEAD_BYTES } from '../protocol/binary.ts';

/** Room left unused at the end above which take() copies the bytes into a buffer of their size. */
const MOST_SLACK_SHARE = 1 / 4;

export interface OutputBytes {
  data: Uint8Array;
  /** `data` with OUTPUT_HEAD_BYTES of room before it, in the same memory. */
  framed: Uint8Array;
}

export class GatheredOutput {
  #buf: Uint8Array;
  #size: number;

  /** `first`: copied, as every later add() is. */
  constructor(first: Uint8Array) {
    this.#buf = new Uint8Array(OUTPUT_HEAD_BYTES + first.byteLength);
    this.#buf.set(first, OUTPUT_HEAD_BYTES);
    this.#size = first.byteLength;
  }

  get size(): number {
    return this.#size;
  }

  /** Copies `bytes` after what is gathered; the buffer at least doubles when it grows, so many small adds copy little. */
  add(bytes: Uint8Array): void {
    const end = OUTPUT_HEAD_BYTES + this.#size + bytes.byteLength;
    if (end > this.#buf.byteLength) {
      const grown = new Uint8Array(Math.max(end, OUTPUT_HEAD_BYTES + 2 * this.#size));
      grown.set(this.#buf.subarray(0, OUTPUT_HEAD_BYTES + this.#size));
      this.#buf = grown;
    }
    this.#buf.set(bytes, OUTPUT_HEAD_BYTES + this.#size);
    this.#size += bytes.byteLength;
  }

  /** The bytes gathered; a buffer that grew well past them is copied down to their size, as frames are kept for replay. */
  take(): OutputBytes {
    let framed = this.#buf.subarray(0, OUTPUT_HEAD_BYTES + this.#size);
    if (this.#buf.byteLength - framed.byteLength > this.#size * MOST_SLACK_SHARE) framed = framed.slice();
    return { data: framed.subarray(OUTPUT_HEAD_BYTES), framed };
  }
}
