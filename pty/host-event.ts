// One session event as the host keeps it until a router acknowledges it (event-stream.ts),
// encoded for each connection in the form that connection reads: output in binary form for a
// router that asked for it (binary-frame.ts, feature `binary_data`), JSON for any other.
// Each form is built once, when first sent; a batch of reads is copied once, into the frame.

import { concatBytes } from '../src/core/bytes.ts';
import type { PtyExit } from '../src/ports/pty-host.ts';
import { encodeDataFrame } from './wire/binary-frame.ts';
import { encodeFrame } from './wire/protocol.ts';

export class HostEvent {
  #json: Uint8Array | undefined;
  #binary: Uint8Array | undefined;
  /** The output, until a frame holds it: then that frame's body (both forms end with it). */
  #parts: readonly Uint8Array[];

  private constructor(
    readonly sessionId: string,
    /** The event's number in this host (docs/protocol.md §3.4). */
    readonly n: number,
    /** The output's size, what the unacknowledged store counts (0 for an exit). */
    readonly bytes: number,
    parts: readonly Uint8Array[],
    json?: Uint8Array,
  ) {
    this.#parts = parts;
    this.#json = json;
  }

  /** Output read from the PTY in `parts` (not copied until sent, so never reuse their memory). */
  static output(sessionId: string, n: number, parts: readonly Uint8Array[], bytes: number): HostEvent {
    return new HostEvent(sessionId, n, bytes, parts);
  }

  static exit(sessionId: string, n: number, exit: PtyExit): HostEvent {
    return new HostEvent(sessionId, n, 0, [], encodeFrame({ t: 'exit', sessionId, n, ...exit }));
  }

  frame(binary: boolean): Uint8Array {
    if (this.#json && (!binary || this.bytes === 0)) return this.#json;
    if (binary) return (this.#binary ??= this.#hold(encodeDataFrame(this.sessionId, this.n, this.#parts)));
    return (this.#json = this.#hold(encodeFrame({ t: 'data', sessionId: this.sessionId, n: this.n, data: concatBytes(this.#parts) })));
  }

  #hold(frame: Uint8Array): Uint8Array {
    this.#parts = [frame.subarray(frame.byteLength - this.bytes)];
    return frame;
  }
}
