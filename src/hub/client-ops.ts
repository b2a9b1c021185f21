// The binding's client operations (docs/protocol.md §5.2, §4.3, §4.4): each decodes its payload
// and calls the session or the connection. Attachment (attachment.ts) owns the connection state.
import { BindingError, PtyError } from '../protocol/errors.ts';
import { base64ToBytes } from '../core/ids.ts';
import { parsePayload, type ClientEnvelope } from '../protocol/envelope.ts';
import type { PayloadOf } from '../protocol/frames.ts';
import * as P from '../protocol/pty-payloads.ts';
import { keyframeFor } from './flushes.ts';
import type { KeyframePacer } from './keyframe-pacer.ts';
import type { LiveSession } from './live-session.ts';
import type { Member } from './member.ts';
import type { ResizeCoalescer, Size } from './resize-coalescer.ts';

export type Handler = (s: LiveSession, f: ClientEnvelope) => Promise<void> | void;

/** What the operations need of the connection they arrived on. */
export interface OpsConnection {
  readonly keyframes: KeyframePacer;
  readonly resizes: ResizeCoalescer;
  requireMember(): Member;
  join(s: LiveSession, f: ClientEnvelope): Promise<void>;
  leave(s: LiveSession, f: ClientEnvelope): void;
  useServiceParameters(params: Record<string, unknown>): void;
  /**
   * Queues a send behind the frames handled before (nothing once the connection has ended); what
   * it throws answers `requestId`, the request it was deferred from.
   */
  later(send: () => Promise<void> | void, requestId: string): void;
  send<Op extends string>(op: Op, id: string, payload: PayloadOf<Op>, sequence: number): void;
  now(): number;
}

export function clientOps(c: OpsConnection): Record<string, Handler> {
  return {
    'pty.join_session': (s, f) => c.join(s, f),
    'pty.leave_session': (s, f) => c.leave(s, f),
    'pty.session_input': (s, f) => {
      const { data } = parsePayload(P.SessionInput, f);
      const bytes = base64ToBytes(data);
      if (!bytes) throw new BindingError('INVALID_REQUEST', 'payload.data must be base64 (RFC 4648 §4, padded)');
      s.input(c.requireMember(), bytes, f.id);
    },
    'pty.session_resize': (s, f) => {
      const { cols, rows } = parsePayload(P.SessionResize, f);
      const member = c.requireMember();
      s.requireController(member, 'resize');
      return c.resizes.offer({ cols, rows }, f.id, (size) => s.resize(member, size.cols, size.rows), (size, id) => c.later(() => deferredResize(s, member, size), id));
    },
    'pty.request_role': (s, f) => s.requestRole(c.requireMember(), parsePayload(P.RequestRole, f).role, f.id),
    'pty.request_keyframe': (s, f) => {
      parsePayload(P.Empty, f);
      const member = c.requireMember();
      return c.keyframes.request(() => keyframeFor(s, member, f.id), (send) => c.later(send, f.id));
    },
    ping: (s, f) => {
      const { client_ts } = parsePayload(P.Ping, f);
      c.send('pong', f.id, { client_ts: client_ts ?? null, server_ts: new Date(c.now()).toISOString() }, s.currentSequence);
    },
    UpdateServiceParameters: (s, f) => {
      c.useServiceParameters(parsePayload(P.UpdateServiceParameters, f).service_parameters);
      c.send('UpdateServiceParameters.Response', f.id, {}, s.currentSequence);
    },
  };
}

/**
 * A size applied at its turn (resize-coalescer.ts) is for the member that asked, if it still
 * controls; a session that stopped running meanwhile answers it as the PTY host would have at once.
 */
async function deferredResize(s: LiveSession, member: Member, { cols, rows }: Size): Promise<void> {
  if (!s.members.has(member) || member.role !== 'controller') return;
  if (s.state !== 'running') throw new PtyError('PTY_RESIZE_FAILED', `the terminal was not resized to ${cols}x${rows}: the session's process has ended`);
  return s.resize(member, cols, rows);
}
