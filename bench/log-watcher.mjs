// Worker thread for bench/storage-log.ts: polls the log's highest committed sequence every
// millisecond and reports when each new high-water mark became visible, so the bench can tell
// how long a frame took from being emitted to being durable. Plain JavaScript: a worker does not
// get tsx's loader on Node 20.
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { createClient } from '@libsql/client';

const { url, authToken, sessionId } = workerData;
const db = createClient({ url, authToken });
let stop = false;
parentPort.on('message', () => (stop = true));
let seen = 0;
const marks = [];
while (!stop) {
  const { rows } = await db.execute({ sql: 'select coalesce(max(sequence), 0) as n from session_log where session_id = ?', args: [sessionId] });
  const n = Number(rows[0]?.n);
  if (n > seen) {
    seen = n;
    marks.push([n, Date.now()]);
  }
  await sleep(1);
}
db.close();
parentPort.postMessage(marks);
