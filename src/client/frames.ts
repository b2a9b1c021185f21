// The client's side of the wire: what it offers at the upgrade, how it frames requests, and what each
// server message means (JSON text or PW1O binary), validated against the server-frame schemas.
import * as v from 'valibot';
import { base64ToBytes, base64urlEncode, bytesToBase64, uuidv7 } from '../core/ids.ts';
import { decodeOutputFrame, encodeInputFrame } from '../protocol/binary.ts';
import { PTY_FRAME_OP } from '../protocol/frames.ts';
import {
  ErrorFramePayload,
  GoodbyePayload,
  HelloPayload,
  PtyFramePayload,
  ServerEnvelope,
  type PtyFramePayload as PtyPayload,
} from '../protocol/server-payloads.ts';
import { BINARY_SUBPROTOCOL, EXTENSION_URI, JSON_SUBPROTOCOL } from '../protocol/uris.ts';

/** `Sec-WebSocket-Protocol` entries: the PTY token, then the bearer as `bearer.<base64url>` (never in the URL). */
export function attachProtocols(binary: boolean, token?: string | null): string[] {
  const protocols: string[] = [binary ? BINARY_SUBPROTOCOL : JSON_SUBPROTOCOL];
  if (token) protocols.push(`bearer.${base64urlEncode(new TextEncoder().encode(token))}`);
  return protocols;
}

/** A client request frame: a fresh UUIDv7 id, the time, and the extension on every join. */
export function requestFrame(op: string, payload: Record<string, unknown>, extra: { replay_from?: number } = {}): { id: string; text: string } {
  const id = uuidv7();
  const frame: Record<string, unknown> = { op, id, ts: new Date().toISOString(), payload };
  if (op === 'pty.join_session') frame.extensions = [EXTENSION_URI];
  if (extra.replay_from !== undefined) frame.replay_from = extra.replay_from;
  return { id, text: JSON.stringify(frame) };
}

/** Input bytes as this connection's mode wants them: a PW1I binary frame or `pty.session_input`. */
export function inputMessage(binary: boolean, data: Uint8Array): string | Uint8Array {
  return binary ? encodeInputFrame(data) : requestFrame('pty.session_input', { data: bytesToBase64(data) }).text;
}

type PtyFrame = Exclude<PtyPayload, { kind: 'Output' }>;

export type Incoming =
  | { type: 'hello'; sequence: number; payload: HelloPayload }
  | { type: 'goodbye'; sequence: number; reason: string }
  /** The binding's `Error` frame; `id` echoes the failed request. */
  | { type: 'error'; id: string; sequence: number; payload: ErrorFramePayload }
  /** Output from a JSON `Output` frame or a PW1O binary frame. */
  | { type: 'output'; sequence: number; data: Uint8Array }
  | { type: 'pty'; id: string; sequence: number; payload: PtyFrame }
  /** Anything else (pong, responses, task updates): passed through untouched. */
  | { type: 'other'; frame: ServerEnvelope }
  | { type: 'invalid'; reason: string };

export function decodeBinary(bytes: Uint8Array): Incoming {
  const out = decodeOutputFrame(bytes);
  return out ? { type: 'output', sequence: out.sequence, data: out.data } : { type: 'invalid', reason: 'binary frame without the PW1O magic' };
}

export function decodeText(text: string): Incoming {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { type: 'invalid', reason: 'text frame is not JSON' };
  }
  const env = v.safeParse(ServerEnvelope, raw);
  if (!env.success) return { type: 'invalid', reason: `not a server frame: ${issue(env.issues)}` };
  const f = env.output;
  switch (f.op) {
    case 'binding_hello': {
      const p = v.safeParse(HelloPayload, f.payload);
      return p.success ? { type: 'hello', sequence: f.sequence, payload: p.output } : invalid(f.op, p.issues);
    }
    case 'binding_goodbye': {
      const p = v.safeParse(GoodbyePayload, f.payload);
      return p.success ? { type: 'goodbye', sequence: f.sequence, reason: p.output.reason } : invalid(f.op, p.issues);
    }
    case 'Error': {
      const p = v.safeParse(ErrorFramePayload, f.payload);
      return p.success ? { type: 'error', id: f.id, sequence: f.sequence, payload: p.output } : invalid(f.op, p.issues);
    }
    case PTY_FRAME_OP: {
      const p = v.safeParse(PtyFramePayload, f.payload);
      if (!p.success) return invalid(`${f.op} ${String(f.payload.kind)}`, p.issues);
      if (p.output.kind !== 'Output') return { type: 'pty', id: f.id, sequence: f.sequence, payload: p.output };
      const data = base64ToBytes(p.output.data);
      return data ? { type: 'output', sequence: f.sequence, data } : { type: 'invalid', reason: 'Output data is not base64' };
    }
    default:
      return { type: 'other', frame: f };
  }
}

function invalid(what: string, issues: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]]): Incoming {
  return { type: 'invalid', reason: `malformed ${what}: ${issue(issues)}` };
}

function issue(issues: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]]): string {
  const first = issues[0];
  const path = first.path?.map((p) => String(p.key)).join('.');
  return path ? `${path}: ${first.message}` : first.message;
}
