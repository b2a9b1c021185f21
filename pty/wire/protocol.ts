// The wire protocol between the router and the PTY host, shared by both sides.
//
// A frame is: u32 BE length of the rest | u32 BE header length | UTF-8 JSON header | body.
// The body carries raw PTY bytes (`write`, `data`) so they are never re-encoded; every other
// message has an empty body. `write` and `data` also have a compact binary form, sent to peers
// that read it (binary-frame.ts); the decoder (frame-decoder.ts) reads both forms. The header length is a u32 rather than a u16 because a spawn
// header holds a whole argv and env, which may legitimately exceed 64 KiB.
//
// Portable on purpose (Node and Deno): Uint8Array, DataView and TextEncoder only.

import * as v from 'valibot';
import type { PtySpawnError } from '../../src/ports/pty-host.ts';

/**
 * Bumped on any incompatible change; the host announces it in `hello`. 2: backends (a v1 host
 * would silently run a tmux spec natively), the `events` handshake, group kills.
 */
export const PROTOCOL_VERSION = 2;

/** Frames above this are refused, so a corrupt length prefix cannot make a reader buffer gigabytes. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Senders split larger `write` payloads into bodies of at most this size. */
export const MAX_BODY_BYTES = 1024 * 1024;

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

const spawnErrorCodes = ['not_found', 'bad_cwd', 'bad_env', 'exists', 'backend_unavailable', 'spawn_failed', 'not_allowed'] as const satisfies readonly PtySpawnError['code'][];

/**
 * What a host can do beyond protocol 2's first form, named in its `hello` (docs/protocol.md §9.2).
 * A router sends the requests below only to a host that names them, so hosts and routers of
 * different releases still talk (a multiplexer host outlives a router upgrade).
 * - `resize_reply`: a `resize` with a `rid` is answered with `resized {rid, error?}`.
 * - `write_failures`: a `write` with a `wid` that cannot be written is answered with `write_failed`.
 * - `binary_data`: the host reads `write` in binary form (binary-frame.ts), and sends `data` in it
 *   to a connection whose `events` asked with `binaryData`.
 * - `session_credit`: the host runs the credit loop (credit-loop.ts) for a connection whose `events`
 *   asked with `credit`, which then gives credit back with `credit`. A host without it (older, it
 *   named `session_flow` and `session_window` instead) is bounded by the router stopping reading.
 * - `shutdown`: a host a router started (`hello.startedBy`) stops on `shutdown`, as on SIGTERM.
 */
export const HOST_FEATURES = ['resize_reply', 'write_failures', 'binary_data', 'session_credit', 'shutdown'] as const;
export type HostFeature = (typeof HOST_FEATURES)[number];

/** Router → host. */
export const RequestSchema = v.variant('t', [
  v.object({ t: v.literal('spawn'), rid, spec: SpawnSpecSchema }),
  v.object({ t: v.literal('list'), rid }),
  // Session events (held while no connection asked for them) flow to this connection from now on.
  // `resume`: what the router already logged of this host's events (docs/protocol.md §3.4); the
  // host sends again every event it has not had acknowledged, but those.
  // `binaryData`: send `data` in binary form (feature binary_data; a host without it drops the key).
  // `credit`: this router gives credit back as it takes output, so run the credit loop for it
  // (feature session_credit).
  v.object({
    t: v.literal('events'),
    resume: v.optional(v.object({ epoch: v.string(), after: v.record(v.string(), int) })),
    binaryData: v.optional(v.boolean()),
    credit: v.optional(v.boolean()),
  }),
  // Durability: the router has journaled the session's events up to `n`, so the host forgets them.
  v.object({ t: v.literal('ack'), sessionId: id, n: int }),
  // The credit loop: the router took `bytes` more of the session's output (feature session_credit).
  v.object({ t: v.literal('credit'), sessionId: id, bytes: v.pipe(int, v.minValue(1)) }),
  // `wid`: answer with write_failed if these bytes cannot be written (feature write_failures).
  v.object({ t: v.literal('write'), sessionId: id, data: body, wid: v.optional(rid) }),
  // `rid`: answer with `resized` once applied or refused (feature resize_reply).
  v.object({ t: v.literal('resize'), sessionId: id, cols: int, rows: int, rid: v.optional(rid) }),
  v.object({ t: v.literal('kill'), sessionId: id, signal: v.optional(v.string()) }),
  // The host stops as on SIGTERM; only one a router started does (feature shutdown).
  v.object({ t: v.literal('shutdown') }),
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
    confinement: v.optional(v.object({ user: v.nullable(v.string()), sandbox: v.picklist(['none', 'bwrap']), network: v.optional(v.picklist(['host', 'none'])) })),
    // Absent from hosts older than this field: none of HOST_FEATURES. Unknown names are kept, not refused.
    features: v.optional(v.array(v.string())),
    // The state directory of the router that started this host; absent for a host started on its own.
    startedBy: v.optional(v.string()),
    // A remote host's default program (its login shell), run for a session that names none.
    shell: v.optional(v.string()),
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
export type MessageSchema = typeof RequestSchema | typeof HostMessageSchema;

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
  frame.set(headerBytes, 8);
  frame.set(bodyBytes, 8 + headerBytes.byteLength);
  return frame;
}
