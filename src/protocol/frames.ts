// Builders for server frames. Each returns the frame object; the caller serializes it once.
import { uuidv7 } from '../ids.ts';
import type { ServerFrame } from './envelope.ts';

export function serverFrame<P>(op: string, payload: P, sequence: number, now: number, id: string = uuidv7(now)): ServerFrame<P> {
  return { op, id, ts: new Date(now).toISOString(), sequence, payload };
}

export type PtyFrameKind = 'Output' | 'Resize' | 'RoleAssigned' | 'MembershipChanged' | 'Keyframe' | 'Closed' | 'Error';

export function ptyPayload<F extends Record<string, unknown>>(kind: PtyFrameKind, fields: F): { kind: PtyFrameKind } & F {
  return { kind, ...fields };
}

export const PTY_FRAME_OP = 'pty.session_frame';
