// Builders for server frames (docs/protocol.md §3). The payload of every op the client parses is
// typed by its schema in server-payloads.ts; other ops (the task operations' responses) are free.
import { uuidv7 } from '../core/ids.ts';
import type { ServerFrame } from './envelope.ts';
import type { ErrorFramePayload, GoodbyePayload, HelloPayload, PongPayload, PtyFramePayload, TaskStatusUpdatePayload } from './server-payloads.ts';

export const PTY_FRAME_OP = 'pty.session_frame';

/** The server ops whose payloads have a schema, and their payload types. */
export interface ServerPayloads {
  binding_hello: HelloPayload;
  binding_goodbye: GoodbyePayload;
  Error: ErrorFramePayload;
  [PTY_FRAME_OP]: PtyFramePayload;
  pong: PongPayload;
  TaskStatusUpdate: TaskStatusUpdatePayload;
}

export type PayloadOf<Op extends string> = Op extends keyof ServerPayloads ? ServerPayloads[Op] : unknown;

export function serverFrame<Op extends string>(op: Op, payload: PayloadOf<Op>, sequence: number, now: number, id: string = uuidv7(now)): ServerFrame<PayloadOf<Op>> {
  return { op, id, ts: new Date(now).toISOString(), sequence, payload };
}

/** A `pty.session_frame` of one kind, as JSON text. */
export function ptyFrameJson(payload: PtyFramePayload, sequence: number, now: number, id?: string): string {
  return JSON.stringify(serverFrame(PTY_FRAME_OP, payload, sequence, now, id));
}
