// Reassembles the host socket's frames (protocol.ts) from a byte stream, in either form: JSON
// header checked against its schema, or the binary form of `write` and `data` (binary-frame.ts).
//
// Portable on purpose (Node and Deno): Uint8Array, DataView and TextDecoder only.

import * as v from 'valibot';
import { BINARY_DATA, BINARY_TAG_MIN, BINARY_WRITE, decodeBinaryFrame } from './binary-frame.ts';
import { MAX_FRAME_BYTES, ProtocolError, RequestSchema, type Message, type MessageSchema } from './protocol.ts';

const PREFIX_BYTES = 8;

/**
 * Reassembles frames from arbitrarily split chunks, in one of two ways (one per decoder):
 * - push() and next(): bodies of decoded messages may be views into pushed chunks, so a caller
 *   must not reuse a chunk's memory after pushing it;
 * - each(): a chunk's memory may be reused once the call returns (a socket read into one buffer,
 *   docs/performance.md "Fewer buffers per output byte"), and each message is handed over
 *   during the call with a body that is valid only until it returns: what a frame split across
 *   chunks needs is copied into buffers the decoder keeps and reuses, never into new ones.
 * After a ProtocolError the decoder stays failed.
 */
export class FrameDecoder<S extends MessageSchema> {
  readonly #schema: S;
  readonly #maxFrameBytes: number;
  /** The binary form this direction carries: `write` to the host, `data` to the router. */
  readonly #binaryKind: number;
  readonly #utf8 = new TextDecoder('utf-8', { fatal: true });
  readonly #chunks: Uint8Array[] = [];
  #buffered = 0;
  #failure: ProtocolError | undefined;
  /** each(): the bytes of an unfinished frame kept between chunks (the first of #chunks, if any). */
  #rest = new Uint8Array(0);
  /** each(): where a frame split across chunks is put together for its one handler call. */
  #joined: Uint8Array | undefined;
  /**
   * Frames decoded, how many of them arrived split across chunks, and the bytes copied to put
   * them together: what the link's read size and the host's frame size (src/core/flow-budget.ts) cost.
   */
  readonly stats = { frames: 0, split: 0, copiedBytes: 0 };

  constructor(schema: S, maxFrameBytes = MAX_FRAME_BYTES) {
    this.#schema = schema;
    this.#maxFrameBytes = maxFrameBytes;
    this.#binaryKind = (schema as MessageSchema) === RequestSchema ? BINARY_WRITE : BINARY_DATA;
  }

  push(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.byteLength;
  }

  /**
   * Hands every whole message that `chunk` completes to `handle`, at once and in order; a body
   * is valid only until `handle` returns. Keeps a copy of what is left over. Throws ProtocolError.
   */
  each(chunk: Uint8Array, handle: (msg: v.InferOutput<S>) => void): void {
    this.#joined ??= new Uint8Array(0);
    this.push(this.#completeRest(chunk));
    try {
      for (let msg = this.next(); msg; msg = this.next()) handle(msg);
    } finally {
      this.#keepRest();
    }
  }

  /** The next whole message, or undefined until more bytes arrive. Throws ProtocolError. */
  next(): v.InferOutput<S> | undefined {
    if (this.#failure) throw this.#failure;
    try {
      return this.#next();
    } catch (err) {
      this.#failure = err instanceof ProtocolError ? err : new ProtocolError(String(err));
      this.#chunks.length = 0;
      this.#buffered = 0;
      throw this.#failure;
    }
  }

  #next(): v.InferOutput<S> | undefined {
    if (this.#buffered < 4) return undefined;
    const rest = readU32(this.#peek(4), 0);
    if (rest > this.#maxFrameBytes) throw new ProtocolError(`frame of ${rest} bytes exceeds ${this.#maxFrameBytes}`);
    if (rest < 4) throw new ProtocolError(`frame of ${rest} bytes is too short`);
    if (this.#buffered < 4 + rest) return undefined;
    const frame = this.#take(4 + rest);
    this.stats.frames++;
    const headerLength = readU32(frame, 4);
    if (headerLength >= BINARY_TAG_MIN) return this.#binary(frame);
    if (headerLength > rest - 4) throw new ProtocolError(`header of ${headerLength} bytes overruns its frame`);
    const headerEnd = PREFIX_BYTES + headerLength;
    return this.#parse(frame.subarray(PREFIX_BYTES, headerEnd), frame.subarray(headerEnd));
  }

  /** No schema parse: the fixed header is all checked as it is read (binary-frame.ts). */
  #binary(frame: Uint8Array): v.InferOutput<S> {
    const msg = decodeBinaryFrame(frame, this.#utf8);
    if (typeof msg === 'string') throw new ProtocolError(msg);
    if (msg.kind !== this.#binaryKind) throw new ProtocolError(`binary ${msg.kind === BINARY_WRITE ? 'write' : 'data'} sent the wrong way`);
    const { sessionId, num, body: data } = msg;
    // Shaped as the schema's output would be: an absent number is no key at all.
    const out: Message =
      msg.kind === BINARY_WRITE
        ? num === undefined ? { t: 'write', sessionId, data } : { t: 'write', sessionId, data, wid: num }
        : num === undefined ? { t: 'data', sessionId, data } : { t: 'data', sessionId, n: num, data };
    return out as v.InferOutput<S>;
  }

  #parse(headerBytes: Uint8Array, bodyBytes: Uint8Array): v.InferOutput<S> {
    let header: unknown;
    try {
      header = JSON.parse(this.#utf8.decode(headerBytes));
    } catch (err) {
      throw new ProtocolError(`unreadable header: ${String(err)}`);
    }
    if (typeof header !== 'object' || header === null || Array.isArray(header)) {
      throw new ProtocolError('header is not a JSON object');
    }
    const result = v.safeParse(this.#schema, { ...header, data: bodyBytes });
    if (!result.success) throw new ProtocolError(`invalid message: ${v.summarize(result.issues)}`);
    // Object schemas drop unknown keys, so `data` survives only on messages that carry a body.
    if (!('data' in result.output) && bodyBytes.byteLength > 0) {
      throw new ProtocolError(`message '${result.output.t}' must not have a body`);
    }
    return result.output;
  }

  /** The first n buffered bytes without consuming them (n <= buffered). */
  #peek(n: number): Uint8Array {
    const first = this.#chunks[0];
    if (first && first.byteLength >= n) return first;
    const out = new Uint8Array(n);
    let filled = 0;
    for (const chunk of this.#chunks) {
      const part = chunk.subarray(0, n - filled);
      out.set(part, filled);
      filled += part.byteLength;
      if (filled === n) break;
    }
    return out;
  }

  /** Consumes the first n buffered bytes (n <= buffered), copying only when they span chunks. */
  #take(n: number): Uint8Array {
    this.#buffered -= n;
    const first = this.#chunks[0];
    if (first && first.byteLength >= n) {
      if (first.byteLength === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = this.#joinedBuffer(n);
    this.stats.split++;
    this.stats.copiedBytes += n;
    let filled = 0;
    while (filled < n) {
      const chunk = this.#chunks[0];
      if (!chunk) throw new Error('decoder buffer accounting is broken');
      const part = chunk.subarray(0, n - filled);
      out.set(part, filled);
      filled += part.byteLength;
      if (part.byteLength === chunk.byteLength) this.#chunks.shift();
      else this.#chunks[0] = chunk.subarray(part.byteLength);
    }
    return out;
  }

  /** A new buffer for push()/next(); for each(), the one reused for every split frame (its message is handled before the next one is joined). */
  #joinedBuffer(n: number): Uint8Array {
    if (this.#joined === undefined) return new Uint8Array(n);
    if (this.#joined.byteLength < n) this.#joined = new Uint8Array(Math.max(n, this.#joined.byteLength * 2));
    return this.#joined.subarray(0, n);
  }

  /**
   * each(): a frame begun in #rest (sized for all of it by #keepRest) is completed there from
   * `chunk`, so its bytes are copied once, never joined again; returns what is left of the chunk.
   */
  #completeRest(chunk: Uint8Array): Uint8Array {
    const kept = this.#chunks[0];
    if (this.#chunks.length !== 1 || kept?.buffer !== this.#rest.buffer || kept.byteOffset !== this.#rest.byteOffset || kept.byteLength < 4) return chunk;
    const frameBytes = 4 + readU32(kept, 0);
    if (frameBytes > this.#rest.byteLength) return chunk;
    const n = Math.min(frameBytes - kept.byteLength, chunk.byteLength);
    this.#rest.set(chunk.subarray(0, n), kept.byteLength);
    this.#chunks[0] = this.#rest.subarray(0, kept.byteLength + n);
    this.#buffered += n;
    this.stats.copiedBytes += n;
    if (kept.byteLength + n === frameBytes) this.stats.split++;
    return chunk.subarray(n);
  }

  /**
   * each(): what is still buffered moves into #rest, the decoder's own memory, before the caller
   * reuses its chunk; #rest has room for the whole frame it begins (when its length is there), so
   * #completeRest can finish it in place.
   */
  #keepRest(): void {
    if (this.#buffered === 0) return;
    let need = this.#buffered;
    if (need >= 4) {
      const frameBytes = 4 + readU32(this.#peek(4), 0);
      if (frameBytes <= this.#maxFrameBytes + 4) need = Math.max(need, frameBytes);
    }
    const parts = this.#chunks.splice(0);
    let rest = this.#rest;
    let at = 0;
    if (rest.byteLength < need) {
      rest = new Uint8Array(Math.max(need, rest.byteLength * 2));
    } else if (parts[0]!.buffer === rest.buffer) {
      // Still in #rest: moved to its start if a frame before it was taken (copyWithin is a memmove).
      const kept = parts.shift()!;
      const from = kept.byteOffset - rest.byteOffset;
      if (from > 0) {
        rest.copyWithin(0, from, from + kept.byteLength);
        this.stats.copiedBytes += kept.byteLength;
      }
      at = kept.byteLength;
    }
    for (const part of parts) {
      rest.set(part, at);
      at += part.byteLength;
      this.stats.copiedBytes += part.byteLength;
    }
    this.#rest = rest;
    this.#chunks.push(rest.subarray(0, at));
  }
}

function readU32(bytes: Uint8Array, offset: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(offset);
}
