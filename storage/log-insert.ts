import type { InValue } from '@libsql/client';
import { getTableName } from 'drizzle-orm';
import type { LogEntry } from '../src/protocol/logged-frames.ts';
import type { LogStatement } from './log-committer.ts';
import { sessionLog } from './schema.ts';

// The log writer's hot path. Building a 100-row insert with drizzle's query builder costs about as
// much CPU as SQLite takes to run it, so the statement text is made here, once per row count,
// from the schema's own table and column names.

/** Rows per INSERT: small enough for any server's bound-parameter limit (SQLite's old default was 999). */
const ROWS_PER_INSERT = 100;

const COLUMNS = [sessionLog.sessionId, sessionLog.sequence, sessionLog.kind, sessionLog.createdAt, sessionLog.frame, sessionLog.output, sessionLog.frameId];
const HEAD = `insert into "${getTableName(sessionLog)}" (${COLUMNS.map((c) => `"${c.name}"`).join(', ')}) values `;
const ROW = `(${COLUMNS.map(() => '?').join(', ')})`;

/**
 * The statements that insert `batch`. A row already there is ignored: that makes a retry
 * idempotent when a commit succeeded but its acknowledgement was lost (remote databases).
 */
export function logInserts(batch: readonly LogEntry[], texts: Map<number, string>): LogStatement[] {
  const statements: LogStatement[] = [];
  for (let i = 0; i < batch.length; i += ROWS_PER_INSERT) {
    const rows = batch.slice(i, i + ROWS_PER_INSERT);
    let text = texts.get(rows.length);
    if (text === undefined) {
      text = `${HEAD}${Array.from({ length: rows.length }, () => ROW).join(', ')} on conflict do nothing`;
      texts.set(rows.length, text);
    }
    statements.push({ sql: text, args: rows.flatMap(rowValues) });
  }
  return statements;
}

/** An Output row keeps the bytes and the frame's id, never its JSON (docs/protocol.md §3.5). */
function rowValues(r: LogEntry): InValue[] {
  if (r.output) return [r.sessionId, r.sequence, r.kind, r.createdAt, '', r.output.data, r.output.id];
  return [r.sessionId, r.sequence, r.kind, r.createdAt, r.frame, null, null];
}
