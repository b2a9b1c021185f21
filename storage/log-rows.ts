// A session_log row as a log entry: an Output row holds the PTY's bytes and the frame's id, and
// its JSON text is built only if a reader asks (docs/protocol.md §3.5); rows written before the
// bytes were kept hold the JSON itself and read as they always did.
import type { InferSelectModel } from 'drizzle-orm';
import { OutputFrame, outputEntry } from '../src/protocol/output-frame.ts';
import type { LogEntry } from '../src/ports.ts';
import type { sessionLog } from './schema.ts';

export function logEntryOf(row: InferSelectModel<typeof sessionLog>): LogEntry {
  const { sessionId, sequence, kind, createdAt, frame, output, frameId } = row;
  if (output !== null && frameId !== null) return outputEntry(sessionId, new OutputFrame(frameId, sequence, createdAt, output));
  return { sessionId, sequence, kind, createdAt, frame };
}
