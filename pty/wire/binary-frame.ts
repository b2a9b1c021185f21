// The compact form of the host socket's two hot messages (docs/protocol.md §9.1): the router's
// `write` (a keystroke) and the host's `data` (its echo, and all other output). Their JSON header
// and schema parse cost the router and the host ~0.1 ms per keystroke each way
// (docs/performance.md, figure 2t); this header is fixed and read with a DataView. A peer sends it
// only to one that said it reads it (HOST_FEATURES `binary_data`, §9.2); every other message keeps
// the JSON form, and so does a message this form cannot carry (see encodeBinaryFrame).
//
// After the frame's u32 length: u32 kind tag | u8 flags (bit 0: the number is present) | u8 0 |
// u16 session id length | f64 number (`wid` of a write, `n` of data; 0 when absent) | session
// id, UTF-8 | body. A JSON frame holds its header length where the tag is, and that is at most
// MAX_FRAME_BYTES, so the two forms never look alike.
//
// Portable on purpose (Node and Deno): Uint8Array, DataView and TextEncoder only.

import { concatBytes } from '../../src/core/bytes.ts';
import { encodeFrame, type Request } from './protocol.ts';

export const BINARY_WRITE = 0xffff_ff01;
export const BINARY_DATA = 0xffff_ff02;
export type BinaryKind = typeof BINARY_WRITE | typeof BINARY_DATA;

/** Every tag from here up is a binary frame's (a JSON header length never comes near it). */
export const BINARY_TAG_MIN = 0xffff_ff00;
/** The length prefix, the tag and the fixed fields before the session id. */
export const BINARY_HEAD_BYTES = 20;
const HAS_NUMBER = 1;
const MAX_ID_BYTES = 0xffff;

export interface BinaryMessage {
  kind: BinaryKind;
  sessionId: string;
  /** `wid` of a write, `n` of data. */
  num: number | undefined;
  body: Uint8Array;
}

/**
 * The frame, with the body's parts copied once into it; undefined when this form cannot carry the
 * message (an empty or over-long session id, a number that is not a non-negative safe integer):
 * then send its JSON form. The caller keeps the frame size within MAX_FRAME_BYTES (bodies are
 * split at MAX_BODY_BYTES, output batches are far smaller).
 */
export function encodeBinaryFrame(kind: BinaryKind, sessionId: string, num: number | undefined, body: Uint8Array | readonly Uint8Array[]): Uint8Array | undefined {
  if (num !== undefined && !(Number.isSafeInteger(num) && num >= 0)) return undefined;
  // Session ids are ASCII (UUIDs) in practice: written as they are, without an encoder's copy.
  const id = isAscii(sessionId) ? undefined : new TextEncoder().encode(sessionId);
  const idBytes = id ? id.byteLength : sessionId.length;
  if (idBytes === 0 || idBytes > MAX_ID_BYTES) return undefined;
  const parts = body instanceof Uint8Array ? [body] : body;
  let bodyBytes = 0;
  for (const part of parts) bodyBytes += part.byteLength;
  const frame = new Uint8Array(BINARY_HEAD_BYTES + idBytes + bodyBytes);
  const view = new DataView(frame.buffer);
  view.setUint32(0, frame.byteLength - 4);
  view.setUint32(4, kind);
  frame[8] = num === undefined ? 0 : HAS_NUMBER;
  view.setUint16(10, idBytes);
  view.setFloat64(12, num ?? 0);
  if (id) frame.set(id, BINARY_HEAD_BYTES);
  else for (let i = 0; i < idBytes; i++) frame[BINARY_HEAD_BYTES + i] = sessionId.charCodeAt(i);
  let at = BINARY_HEAD_BYTES + idBytes;
  for (const part of parts) {
    frame.set(part, at);
    at += part.byteLength;
  }
  return frame;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * Reads a whole binary frame (its length prefix included, already checked against the frame's
 * size); the body is a view into `frame`. A string says why the frame is malformed.
 */
export function decodeBinaryFrame(frame: Uint8Array, utf8: TextDecoder): BinaryMessage | string {
  if (frame.byteLength < BINARY_HEAD_BYTES) return `binary frame of ${frame.byteLength} bytes is too short`;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const kind = view.getUint32(4);
  if (kind !== BINARY_WRITE && kind !== BINARY_DATA) return `unknown binary frame kind ${kind.toString(16)}`;
  const flags = frame[8]!;
  if ((flags & ~HAS_NUMBER) !== 0 || frame[9] !== 0) return 'binary frame with unknown flags';
  const idEnd = BINARY_HEAD_BYTES + view.getUint16(10);
  if (idEnd === BINARY_HEAD_BYTES || idEnd > frame.byteLength) return 'binary frame with an empty or overrunning session id';
  const raw = view.getFloat64(12);
  let num: number | undefined;
  if (flags & HAS_NUMBER) {
    if (!(Number.isSafeInteger(raw) && raw >= 0)) return `binary frame with an invalid number ${raw}`;
    num = raw;
  } else if (raw !== 0 || Object.is(raw, -0)) {
    return 'binary frame with a number but no flag for it';
  }
  let sessionId: string;
  try {
    sessionId = utf8.decode(frame.subarray(BINARY_HEAD_BYTES, idEnd));
  } catch (err) {
    return `binary frame with an unreadable session id: ${String(err)}`;
  }
  return { kind, sessionId, num, body: frame.subarray(idEnd) };
}

type WriteRequest = Extract<Request, { t: 'write' }>;

/** A `write` in binary form (to a host with `binary_data`), or in JSON when that form cannot carry it. */
export function encodeWriteFrame(msg: WriteRequest): Uint8Array {
  return encodeBinaryFrame(BINARY_WRITE, msg.sessionId, msg.wid, msg.data) ?? encodeFrame(msg);
}

/** A `data` event in binary form, its body given in parts (copied once), or in JSON when that form cannot carry it. */
export function encodeDataFrame(sessionId: string, n: number | undefined, parts: readonly Uint8Array[]): Uint8Array {
  return encodeBinaryFrame(BINARY_DATA, sessionId, n, parts) ?? encodeFrame({ t: 'data', sessionId, n, data: concatBytes(parts) });
}
