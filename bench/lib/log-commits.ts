// Figure 5: the session's log while it streams, read from the router's database file by a second
// connection — how many rows and bytes were committed, and how long after the last byte the last
// commit was visible.
import { createClient } from '@libsql/client';
import type { BenchServer } from './server.ts';

export interface LogCommits {
  rowsPerSec: number;
  logMBps: number;
  durabilityDelayMs: number;
}

/** Polls the database file until every logged frame of the session is committed (or 30 s after the last byte). */
export async function logCommits(server: BenchServer, sessionId: string, firstByteAt: number, lastByteAt: number): Promise<LogCommits> {
  const db = createClient({ url: `file:${server.dir}/pty-ws.db` });
  try {
    const expected = Number((await server.getSession(sessionId)).current_sequence);
    for (;;) {
      const r = await db.execute({ sql: 'SELECT count(*) AS n, coalesce(sum(length(frame) + coalesce(length(output), 0)), 0) AS b FROM session_log WHERE session_id = ?', args: [sessionId] });
      const n = Number(r.rows[0]!.n);
      const now = performance.now();
      if (n >= expected || now - lastByteAt > 30_000) {
        const seconds = (now - firstByteAt) / 1000;
        return { rowsPerSec: n / seconds, logMBps: Number(r.rows[0]!.b) / 1e6 / seconds, durabilityDelayMs: Math.max(0, now - lastByteAt) };
      }
      await new Promise((res) => setTimeout(res, 10));
    }
  } finally {
    db.close();
  }
}
