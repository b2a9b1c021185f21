// The wire protocol between the router and the PTY host, shared by both sides.
//
// A frame is: u32 BE length of the rest | u32 BE header length | UTF-8 JSON header | body.
// The body carries raw PTY bytes (`write`, `data`) so they are never re-encoded; every other
// message has an empty body. The header length is a u32 rather than a u16 because a spawn
// header holds a whole argv and env, which may legitimately exceed 64 KiB.
//
// Portable on purpose (Node and Deno): Uint8Array, DataView and TextEncoder only.

import * as v from 'valibot';
import type { PtySpawnError } from '../src/ports.ts';

/**
 * Bumped on any incompatible change; the host announces it in `hello`. 2: backends (a v1 host
 * would silently run a tmux spec natively), the `events` handshake, group kills.
 */
export const PROTOCOL_VERSION = 2;

/** Frames above this are refused, so a corrupt length prefix cannot make a reader buffer gigabytes. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Senders split larger `write` payloads into bodies of at most this size. */
export const MAX_BODY_BYTES = 1024 * 1024;

const PREFIX_BYTES = 8;

const id = v.pipe(v.string(), v.minLength(1));
const rid = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
// Ranges are the host's business: a bad size is a refused request, not a broken stream.
const int = v.pipe(v.number(), v.safeInteger());
// Not v.instance(Uint8Array): that infers Uint8Array<ArrayBuffer>, which Buffers and views are not.
const body = v.custom<Uint8Array>((input) => input instanceof Uint8Array, 'expected bytes');

export const SpawnSpecSchema = v.object({
  sessionId: id,
  // Any string: an unknown backend is a refused spawn, not a broken stream.
  backend: v.string(),
  argv: v.pipe(v.array(v.string()), v.minLength(1)),
  cwd: v.string(),
  env: v.record(v.string(), v.string()),
  cols: int,
  rows: int,
});

const SessionInfoSchema = v.object({ sessionId: id, backend: v.string(), pid: int, cols: int, rows: int });

const spawnErrorCodes = ['not_found', 'bad_cwd', 'exists', 'backend_unavailable', 'spawn_failed'] as const satisfies readonly PtySpawnError['code'][];

/**
 * What a host can do beyond protocol 2's first form, named in its `hello` (docs/protocol.md §9.2).
 * A router sends the requests below only to a host that names them, so hosts and routers of
 * different releases still talk (a multiplexer host outlives a router upgrade).
 * - `session_flow`: `flow {sessionId, paused}` pauses one session's PTY.
 * - `resize_reply`: a `resize` with a `rid` is answered with `resized {rid, error?}`.
 * - `write_failures`: a `write` with a `wid` that cannot be written is answered with `write_failed`.
 */
export const HOST_FEATURES = ['session_flow', 'resize_reply', 'write_failures'] as const;
export type HostFeature = (typeof HOST_FEATURES)[number];

/** Router → host. */
export const RequestSchema = v.variant('t', [
  v.object({ t: v.literal('spawn'), rid, spec: SpawnSpecSchema }),
  v.object({ t: v.literal('list'), rid }),
  // Session events (held while no connection asked for them) flow to this connection from now on.
  // `resume`: what the router already logged of this host's events (docs/protocol.md §3.4); the
  // host sends again every event it has not had acknowledged, but those.
  v.object({ t: v.literal('events'), resume: v.optional(v.object({ epoch: v.string(), after: v.record(v.string(), int) })) }),
  // The router has logged the session's events up to `n`: the host forgets them.
  v.object({ t: v.literal('ack'), sessionId: id, n: int }),
  // `wid`: answer with write_failed if these bytes cannot be written (feature write_failures).
  v.object({ t: v.literal('write'), sessionId: id, data: body, wid: v.optional(rid) }),
  // `rid`: answer with `resized` once applied or refused (feature resize_reply).
  v.object({ t: v.literal('resize'), sessionId: id, cols: int, rows: int, rid: v.optional(rid) }),
  v.object({ t: v.literal('kill'), sessionId: id, signal: v.optional(v.string()) }),
  // This connection holds one session's PTY paused, or lets it go (feature session_flow).
  v.object({ t: v.literal('flow'), sessionId: id, paused: v.boolean() }),
]);

/**
 * Host → router: a greeting (with the backends this host can run), replies to `spawn`/`list`
 * (matched by `rid`), and session events (only after the connection sent `events`).
 */
export const HostMessageSchema = v.variant('t', [
  v.object({
    t: v.literal('hello'),
    protocol: int,
    pid: int,
    backends: v.array(v.string()),
    // This host process's own id: event numbers `n` count from 1 in each.
    epoch: v.optional(v.string()),
    // Absent from hosts older than this field: they run sessions unconfined.
    confinement: v.optional(v.object({ user: v.nullable(v.string()), sandbox: v.picklist(['none', 'bwrap']) })),
    // Absent from hosts older than this field: none of HOST_FEATURES. Unknown names are kept, not refused.
    features: v.optional(v.array(v.string())),
  }),
  v.object({ t: v.literal('spawned'), rid, pid: int }),
  v.object({ t: v.literal('listed'), rid, sessions: v.array(SessionInfoSchema) }),
  v.object({ t: v.literal('failed'), rid, code: v.picklist(spawnErrorCodes), message: v.string() }),
  v.object({ t: v.literal('resized'), rid, error: v.optional(v.string()) }),
  v.object({ t: v.literal('write_failed'), sessionId: id, wid: rid, message: v.string() }),
  // `n`: the event's number in this host (epoch), for `ack` and `resume`.
  v.object({ t: v.literal('data'), sessionId: id, n: v.optional(int), data: body }),
  v.object({ t: v.literal('exit'), sessionId: id, n: v.optional(int), exitCode: v.nullable(int), signal: v.nullable(int) }),
]);

export type Request = v.InferOutput<typeof RequestSchema>;
export type HostMessage = v.InferOutput<typeof HostMessageSchema>;
export type Message = Request | HostMessage;
type MessageSchema = typeof RequestSchema | typeof HostMessageSchema;

/** A refused or failed request, shaped like the PtySpawnError the router hands to clients. */
export class PtyHostError extends Error implements PtySpawnError {
  override readonly name = 'PtyHostError';
  constructor(
    readonly code: PtySpawnError['code'],
    message: string,
  ) {
    super(message);
  }
}

/** The byte stream is unusable (oversize frame, bad header): drop the connection. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}

export function encodeFrame(msg: Message): Uint8Array {
  const { data, ...header } = msg as Message & { data?: Uint8Array };
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const bodyBytes = data ?? new Uint8Array(0);
  const rest = 4 + headerBytes.byteLength + bodyBytes.byteLength;
  if (rest > MAX_FRAME_BYTES) throw new RangeError(`frame of ${rest} bytes exceeds ${MAX_FRAME_BYTES}`);
  const frame = new Uint8Array(4 + rest);
  const view = new DataView(frame.buffer);
  view.setUint32(0, rest);
  view.setUint32(4, headerBytes.byteLength);
  frame.set(headerBytes, PREFIX_BYTES);
  frame.set(bodyBytes, PREFIX_BYTES + headerBytes.byteLength);
  return frame;
}

/**
 * Reassembles frames from arbitrarily split chunks. Bodies of decoded messages may be views
 * into pushed chunks, so a caller must not reuse a chunk's memory after pushing it.
 * After a ProtocolError the decoder stays failed.
 */
export class FrameDecoder<S extends MessageSchema> {
  readonly #schema: S;
  readonly #maxFrameBytes: number;
  readonly #chunks: Uint8Array[] = [];
  #buffered = 0;
  #failure: ProtocolError | undefined;

  constructor(schema: S, maxFrameBytes = MAX_FRAME_BYTES) {
    this.#schema = schema;
    this.#maxFrameBytes = maxFrameBytes;
  }

  push(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.byteLength;
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
    const headerLength = readU32(frame, 4);
    if (headerLength > rest - 4) throw new ProtocolError(`header of ${headerLength} bytes overruns its frame`);
    const headerEnd = PREFIX_BYTES + headerLength;
    return this.#parse(frame.subarray(PREFIX_BYTES, headerEnd), frame.subarray(headerEnd));
  }

  #parse(headerBytes: Uint8Array, bodyBytes: Uint8Array): v.InferOutput<S> {
    let header: unknown;
    try {
      header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(headerBytes));
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
    const out = new Uint8Array(n);
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
}

function readU32(bytes: Uint8Array, offset: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(offset);
}
