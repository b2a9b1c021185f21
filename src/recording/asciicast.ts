// A session's retained log as an asciicast v2 recording (https://docs.asciinema.org/manual/asciicast/v2/):
// a header line, then `[t, "o", text]` for Output and `[t, "r", "COLSxROWS"]` for Resize, t in seconds
// from the first event. Read page by page, so a 100k-frame log never sits in memory at once.
import * as v from 'valibot';
import { base64ToBytes } from '../core/ids.ts';
import { outputBytes } from '../protocol/output-frame.ts';
import { KeyframePayload, ResizePayload, ServerEnvelope } from '../protocol/server-payloads.ts';
import type { LogEntry } from '../protocol/logged-frames.ts';
import type { SessionRecord, Store } from '../ports/store.ts';

export const ASCIICAST_CONTENT_TYPE = 'application/x-asciicast';

interface Start {
  /** Events are the frames after this sequence. */
  after: number;
  startMs: number;
  cols: number;
  rows: number;
  /** A Keyframe's screen the recording opens with, when the log no longer reaches back to the start. */
  screen: string | null;
}

/**
 * The recording, in chunks of whole lines: the log as it stands when called (frames logged later are
 * not waited for). A complete log plays from its first frame; a pruned one from its first Keyframe,
 * whose screen is the opening event, so the player starts from a coherent screen.
 */
export async function* asciicastChunks(store: Store, rec: SessionRecord, pageSize = 200): AsyncGenerator<string> {
  const oldest = await store.oldestSequence(rec.id);
  const last = await store.lastSequence(rec.id);
  const title = rec.label ?? `pty-ws session ${rec.id}`;
  if (oldest === null) {
    yield line(header(rec.cols, rec.rows, Date.parse(rec.createdAt), title));
    return;
  }
  const start = await findStart(store, rec, oldest, last, pageSize);
  let out = line(header(start.cols, start.rows, start.startMs, title));
  if (start.screen) out += line([0, 'o', start.screen]);
  yield out;

  const decoder = new TextDecoder();
  let after = start.after;
  let t = 0;
  for (;;) {
    const page = (await store.readLog(rec.id, after, pageSize)).filter((e) => e.sequence <= last);
    if (page.length === 0) break;
    out = '';
    for (const e of page) {
      after = e.sequence;
      t = Math.max(0, Math.round(e.createdAt - start.startMs) / 1000);
      if (e.kind === 'Output') {
        const bytes = outputBytes(e);
        // Streaming decode: a UTF-8 character split across two Output frames stays one character.
        const text = bytes ? decoder.decode(bytes, { stream: true }) : '';
        if (text) out += line([t, 'o', text]);
      } else if (e.kind === 'Resize') {
        const r = payload(e, ResizePayload);
        if (r) out += line([t, 'r', `${r.cols}x${r.rows}`]);
      }
    }
    if (out) yield out;
    if (after >= last) break;
  }
  const rest = decoder.decode();
  if (rest) yield line([t, 'o', rest]);
}

/**
 * Where the recording starts and the terminal size there. The size is the first Keyframe's, or the
 * first Resize's target when a Resize comes first (the log does not say what it resized from), or
 * the session's size when the log has neither.
 */
async function findStart(store: Store, rec: SessionRecord, oldest: number, last: number, pageSize: number): Promise<Start> {
  const complete = oldest <= 1;
  let first: LogEntry | undefined;
  let size: { cols: number; rows: number } | undefined;
  let after = oldest - 1;
  scan: while (after < last) {
    const page = await store.readLog(rec.id, after, pageSize);
    if (page.length === 0) break;
    for (const e of page) {
      if (e.sequence > last) break scan;
      after = e.sequence;
      first ??= e;
      if (e.kind === 'Keyframe') {
        const k = payload(e, KeyframePayload);
        if (!k) continue;
        if (!complete) return { after: e.sequence, startMs: e.createdAt, cols: k.snapshot_cols, rows: k.snapshot_rows, screen: utf8(k.snapshot) };
        size ??= { cols: k.snapshot_cols, rows: k.snapshot_rows };
      } else if (e.kind === 'Resize') {
        const r = payload(e, ResizePayload);
        if (r) size ??= { cols: r.cols, rows: r.rows };
      }
      if (complete && size) break scan;
    }
  }
  return { after: oldest - 1, startMs: first?.createdAt ?? Date.parse(rec.createdAt), cols: size?.cols ?? rec.cols, rows: size?.rows ?? rec.rows, screen: null };
}

function header(cols: number, rows: number, startMs: number, title: string) {
  return { version: 2, width: cols, height: rows, timestamp: Math.floor(startMs / 1000), title, env: { TERM: 'xterm-256color' } };
}

function line(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

function payload<T extends v.GenericSchema>(e: LogEntry, schema: T): v.InferOutput<T> | null {
  try {
    const env = v.safeParse(ServerEnvelope, JSON.parse(e.frame));
    if (!env.success) return null;
    const p = v.safeParse(schema, env.output.payload);
    return p.success ? p.output : null;
  } catch {
    return null;
  }
}

function utf8(b64: string): string {
  const bytes = base64ToBytes(b64);
  return bytes ? new TextDecoder().decode(bytes) : '';
}
