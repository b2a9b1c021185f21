// Reading a logged frame back (the log holds frames exactly as sent to JSON clients): the same
// schemas the client parses, so a reader of the log and a client can never disagree on a shape.
import * as v from 'valibot';
import { PtyFramePayload, ServerEnvelope, TaskStatusUpdatePayload } from './server-payloads.ts';

function envelopeOf(json: string): ServerEnvelope | undefined {
  try {
    const r = v.safeParse(ServerEnvelope, JSON.parse(json));
    return r.success ? r.output : undefined;
  } catch {
    return undefined;
  }
}

/** The payload of a logged `pty.session_frame`, or undefined when the text is not a valid one. */
export function loggedPtyPayload(json: string): PtyFramePayload | undefined {
  const env = envelopeOf(json);
  const r = env && v.safeParse(PtyFramePayload, env.payload);
  return r?.success ? r.output : undefined;
}

/** The payload of a logged TaskStatusUpdate, or undefined when the text is not a valid one. */
export function loggedTaskUpdate(json: string): TaskStatusUpdatePayload | undefined {
  const env = envelopeOf(json);
  const r = env && v.safeParse(TaskStatusUpdatePayload, env.payload);
  return r?.success ? r.output : undefined;
}

export interface LogEntry {
  sessionId: string;
  sequence: number;
  /** Frame kind: Output, Resize, MembershipChanged, Keyframe, Closed, TaskStatusUpdate. */
  kind: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** The frame exactly as sent to JSON clients (for Output, built on first read: src/protocol/output-frame.ts). */
  readonly frame: string;
  /**
   * Output only: the frame's id and the PTY's bytes. The store and the journal keep these rather
   * than `frame`, so the output path does no base64 or JSON unless a JSON client or reader asks.
   */
  output?: { readonly id: string; readonly data: Uint8Array };
  /** For Output: the last PTY host event folded in (journal only, docs/protocol.md §3.4). */
  hostEvent?: { epoch: string; n: number };
}
