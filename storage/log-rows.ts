// A session_log row as a log entry: an Output row holds the PTY's bytes and the frame's id, and
// its JSON text is built only if a reader asks (docs/protocol.md §3.5); rows written before the
// bytes were kept hold the JSON itself and read as they always did.
import { OutputFrame, outputEntry } from '../src/protocol/output-frame.ts';
import type { LogEntry } from '../src/protocol/logged-frames.ts';
import { bytesFromDriver, sessionLog } from './schema.ts';

/**
 * What a log read selects, in this order: its rows are read by position (logEntryOfValues).
 * A replay reads a thousand rows at a time, and drizzle's mapping of each row to an object was
 * a third of the read (docs/performance.md, replay).
 */
export const logValueColumns = {
  sequence: sessionLog.sequence,
  kind: sessionLog.kind,
  createdAt: sessionLog.createdAt,
  frame: sessionLog.frame,
  output: sessionLog.output,
  frameId: sessionLog.frameId,
};

/** A row of `logValueColumns`, by position, as a driver hands it out (storage/log-reader.ts, drizzle's `.values()`). */
export function logEntryOfValues(sessionId: string, row: ArrayLike<unknown>): LogEntry {
  const sequence = row[0] as number;
  const kind = row[1] as string;
  const createdAt = row[2] as number;
  const output = row[4] as ArrayBuffer | Uint8Array | null;
  const frameId = row[5] as string | null;
  if (output !== null && frameId !== null) return outputEntry(sessionId, new OutputFrame(frameId, sequence, createdAt, bytesFromDriver(output)));
  return { sessionId, sequence, kind, createdAt, frame: row[3] as string };
}
