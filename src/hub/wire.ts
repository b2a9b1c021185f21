// The hub's one encoder: session events and unicast answers become frames here and nowhere else
// (JSON envelope, base64, PW1O; docs/protocol.md §2, §5.3). Each log frame is encoded once, for the
// store and every connection; its PW1O form only if a binary connection asks for it.
import { bytesToBase64, uuidv7 } from '../core/ids.ts';
import { errorPayload } from '../protocol/errors.ts';
import { PTY_FRAME_OP, ptyFrameJson, serverFrame } from '../protocol/frames.ts';
import { OutputFrame, outputEntry } from '../protocol/output-frame.ts';
import type { KeyframePayload, PtyFramePayload } from '../protocol/server-payloads.ts';
import { SNAPSHOT_FORMAT } from '../protocol/uris.ts';
import type { LogEntry } from '../protocol/logged-frames.ts';
import type { ScreenSnapshot } from '../ports/screen.ts';
import type { LogFrame, SessionEvent, Unicast } from './types.ts';

/**
 * The log frame of a session's event, and its entry for the store. Output stays bytes (its JSON
 * and PW1O forms are built on first use, src/protocol/output-frame.ts); every other kind is JSON
 * text at once.
 */
export function encodeLogFrame(sessionId: string, event: SessionEvent, sequence: number, now: number, hostEvent?: LogEntry['hostEvent']): { frame: LogFrame; entry: LogEntry } {
  if (event.kind === 'Output') {
    const frame = new OutputFrame(uuidv7(now), sequence, now, event.data, event.framed);
    return { frame, entry: outputEntry(sessionId, frame, hostEvent) };
  }
  const frame = { sequence, json: JSON.stringify(eventFrame(event, sequence, now)) };
  const entry: LogEntry = { sessionId, sequence, kind: event.kind, createdAt: now, frame: frame.json };
  if (hostEvent) entry.hostEvent = hostEvent;
  return { frame, entry };
}

function eventFrame(event: Exclude<SessionEvent, { kind: 'Output' }>, sequence: number, now: number): object {
  if (event.kind !== 'TaskStatusUpdate') return serverFrame(PTY_FRAME_OP, ptyPayload(event), sequence, now);
  const envelope = event.serviceParameters ? { service_parameters: event.serviceParameters } : {};
  return { ...serverFrame('TaskStatusUpdate', event.update, sequence, now), ...envelope };
}

function ptyPayload(event: Exclude<SessionEvent, { kind: 'TaskStatusUpdate' | 'Output' }>): PtyFramePayload {
  switch (event.kind) {
    case 'Resize':
      return { kind: 'Resize', cols: event.cols, rows: event.rows };
    case 'MembershipChanged':
      return { kind: 'MembershipChanged', ...event.members };
    case 'Keyframe':
      return keyframePayload(event.snapshot);
    case 'Closed':
      return { kind: 'Closed', exit_code: event.exitCode, reason: event.reason, detail: event.detail };
  }
}

function keyframePayload(snap: ScreenSnapshot): KeyframePayload {
  return {
    kind: 'Keyframe',
    snapshot: bytesToBase64(new TextEncoder().encode(snap.snapshot)),
    snapshot_format: SNAPSHOT_FORMAT,
    snapshot_cols: snap.cols,
    snapshot_rows: snap.rows,
    anchor_sequence: snap.anchor,
  };
}

/** A frame for one connection (docs/protocol.md §3.1), as JSON text: not logged, numbered with its `sequence`. */
export function encodeUnicast(u: Unicast, now: number): string {
  if (u.kind === 'Error') return JSON.stringify(serverFrame('Error', errorPayload(u.error), u.sequence, now, u.id));
  if (u.kind === 'Goodbye') return JSON.stringify(serverFrame('binding_goodbye', { reason: u.reason }, u.sequence, now, u.id));
  return ptyFrameJson(unicastPayload(u), u.sequence, now, u.id);
}

function unicastPayload(u: Exclude<Unicast, { kind: 'Error' | 'Goodbye' }>): PtyFramePayload {
  switch (u.kind) {
    case 'RoleAssigned':
      return {
        kind: 'RoleAssigned',
        role: u.role,
        client_id: u.clientId,
        downgraded: u.downgraded || undefined,
        reason: u.reason || undefined,
        ignored_fields: u.ignored?.length ? [...u.ignored] : undefined,
      };
    case 'Keyframe':
      return keyframePayload(u.snapshot);
    case 'OutputLagged': {
      const message = `this connection fell behind; Output up to sequence ${u.anchor} was dropped for it and the next frame is a Keyframe`;
      return { kind: 'Error', code: 'PTY_OUTPUT_LAGGED', message };
    }
    case 'PtyError':
      return { kind: 'Error', code: u.error.code, message: u.error.message };
  }
}
