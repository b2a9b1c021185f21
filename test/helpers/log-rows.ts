// What the replay log holds, read straight from the database, next to what a client received.
import type { Client, Row } from '@libsql/client';
import type { Frame, TestClient } from './client.ts';

export interface LogRow {
  sequence: number;
  kind: string;
  createdAt: number;
  frame: Frame;
}

export async function readLogRows(db: Client, sessionId: string): Promise<LogRow[]> {
  const { rows } = await db.execute({ sql: 'select sequence, kind, created_at, frame, output, frame_id from session_log where session_id = ? order by sequence', args: [sessionId] });
  return rows.map((r) => ({ sequence: Number(r.sequence), kind: String(r.kind), createdAt: Number(r.created_at), frame: rowFrame(r) }));
}

/**
 * The frame a row stands for. An Output row keeps the PTY's bytes and the frame's id, not its JSON
 * (docs/protocol.md §3.5): the frame is put together here as a client gets it, independently of
 * the server's code, so a test comparing it with what a client received checks the server.
 */
function rowFrame(r: Row): Frame {
  if (r.output === null) return JSON.parse(String(r.frame)) as Frame;
  const data = Buffer.from(r.output as ArrayBuffer).toString('base64');
  const payload = { kind: 'Output', stream: 'stdout', data };
  return { op: 'pty.session_frame', id: String(r.frame_id), ts: new Date(Number(r.created_at)).toISOString(), sequence: Number(r.sequence), payload } as Frame;
}

export async function maxLoggedSequence(db: Client, sessionId: string): Promise<number> {
  const { rows } = await db.execute({ sql: 'select coalesce(max(sequence), 0) as n from session_log where session_id = ?', args: [sessionId] });
  return Number(rows[0]?.n);
}

/** Sends pty.join_session and waits for its Keyframe (or Error); resolves with the request id. */
export async function join(c: TestClient, payload: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const id = c.send('pty.join_session', payload, extra);
  await c.waitForFrame((f) => f.id === id && (f.payload.kind === 'Keyframe' || f.op === 'Error'), 'join to finish');
  return id;
}

/**
 * The log frames a client received, in order: every `pty.session_frame` except the unicast ones,
 * which echo one of the client's request ids (RoleAssigned, the join Keyframe).
 */
export function logFramesOf(c: TestClient, requestIds: readonly string[]): Frame[] {
  return c.frames().filter((f) => f.op === 'pty.session_frame' && !requestIds.includes(f.id));
}

/** The highest sequence a client has seen: its replay cursor (docs/protocol.md §3.2). */
export function cursorOf(c: TestClient, requestIds: readonly string[]): number {
  return Math.max(0, ...logFramesOf(c, requestIds).map((f) => f.sequence));
}
