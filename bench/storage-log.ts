// Replay-log throughput: rows/s and MB/s committed to libSQL. Not part of `npm test`.
//
//   node --import tsx bench/storage-log.ts                 # both measurements on a temp file
//   node --import tsx bench/storage-log.ts --url http://127.0.0.1:8080 --auth-token "$JWT"
//
// 1. store: --frames frames of --frame-bytes appended to the store in bursts of 1000 (yielding
//    between bursts, as PTY output arrives), then flushed: the writer alone, committing as the Node
//    router does (a worker thread for a file database).
// 2. pty-stream: a real router in this process, a real PTY host, a session streaming --pty-mb MiB
//    of base64 through its PTY to one attached client; measured from the join until the session's
//    Closed frame is committed (the whole path: PTY host, hub, emulator, writer). A worker thread
//    polls the log meanwhile, so it also reports the durability delay: from a frame's creation
//    to its commit being visible (p50/p99/max, within the 1 ms poll).
// 3. pty-interactive: the same with a line every 10 ms: the durability delay at a human pace.
// Prints one JSON line per measurement.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { createClient } from '@libsql/client';
import WebSocket from 'ws';
import { startServer } from '../src/adapter/node/server.ts';
import { nodeLogCommitterFor } from '../src/adapter/node/worker-log-committer.ts';
import { loadConfig } from '../src/core/config.ts';
import type { Logger } from '../src/ports/logger.ts';
import { openStore } from '../storage/open.ts';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    'auth-token': { type: 'string' },
    frames: { type: 'string', default: '100000' },
    'frame-bytes': { type: 'string', default: '256' },
    'pty-mb': { type: 'string', default: '64' },
  },
});

const quiet: Logger = { log: () => undefined, child: () => quiet };
const mb = (bytes: number): number => bytes / (1024 * 1024);
const round = (n: number): number => Math.round(n * 10) / 10;

async function committed(url: string, authToken: string | undefined, sessionId: string): Promise<{ rows: number; bytes: number }> {
  const db = createClient({ url, authToken });
  try {
    const { rows } = await db.execute({ sql: 'select count(*) as n, coalesce(sum(length(frame) + coalesce(length(output), 0)), 0) as b from session_log where session_id = ?', args: [sessionId] });
    return { rows: Number(rows[0]?.n), bytes: Number(rows[0]?.b) };
  } finally {
    db.close();
  }
}

async function rowTimes(url: string, authToken: string | undefined, sessionId: string): Promise<Array<[number, number]>> {
  const db = createClient({ url, authToken });
  try {
    const { rows } = await db.execute({ sql: 'select sequence, created_at from session_log where session_id = ? order by sequence', args: [sessionId] });
    return rows.map((r) => [Number(r.sequence), Number(r.created_at)]);
  } finally {
    db.close();
  }
}

/** For each row, when the first high-water mark at or above it was seen, minus when it was made. */
function durabilityDelays(rows: Array<[number, number]>, marks: Array<[number, number]>): { p50: number; p99: number; max: number } {
  const delays: number[] = [];
  let m = 0;
  for (const [sequence, createdAt] of rows) {
    while (m < marks.length && marks[m]![0] < sequence) m++;
    if (m < marks.length) delays.push(marks[m]![1] - createdAt);
  }
  delays.sort((a, b) => a - b);
  const at = (q: number): number => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: delays.at(-1) ?? NaN };
}

async function benchStore(url: string, authToken: string | undefined): Promise<void> {
  const frames = Number(values.frames);
  const payload = 'x'.repeat(Number(values['frame-bytes']));
  const sessionId = `bench-${Date.now()}`;
  const store = await openStore({ url, authToken, logger: quiet, logCommitterFor: nodeLogCommitterFor(quiet) });
  // One commit before the clock starts: the worker thread's start (once per router) is not throughput.
  store.appendLog({ sessionId: `${sessionId}-warm-up`, sequence: 1, kind: 'Output', createdAt: Date.now(), frame: '{}' });
  await store.flush();
  const start = performance.now();
  for (let sequence = 1; sequence <= frames; sequence++) {
    if (sequence % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
    store.appendLog({ sessionId, sequence, kind: 'Output', createdAt: Date.now(), frame: JSON.stringify({ op: 'pty.session_frame', sequence, payload: { kind: 'Output', data: payload } }) });
  }
  // A flush rejects when frames were dropped (queue over its cap): the counts below show how many.
  await store.flush().catch(() => undefined);
  const seconds = (performance.now() - start) / 1000;
  await store.close().catch(() => undefined);
  const { rows, bytes } = await committed(url, authToken, sessionId);
  console.log(JSON.stringify({ bench: 'store', url: url.replace(/\?.*$/, ''), appended: frames, rows, rowsPerSecond: Math.round(rows / seconds), frameMBPerSecond: round(mb(bytes) / seconds), seconds: round(seconds) }));
}

async function benchPty(bench: string, command: string, printed: number, dir: string, url: string, authToken: string | undefined): Promise<void> {
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', PTY_WS_AUTH: 'off', PTY_WS_DATABASE_URL: url, PTY_WS_DATABASE_AUTH_TOKEN: authToken };
  // Retention never runs: every row written stays to be counted.
  const config = loadConfig(env, { port: '0', 'state-dir': dir, 'replay-buffer-frames': '100000000', 'replay-retention-seconds': '31536000' });
  const server = await startServer(config, { logger: quiet });
  try {
    const res = await fetch(`${server.origin}/agents/local/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ command }),
    });
    const { session_id: sessionId } = (await res.json()) as { session_id: string };
    const watcher = new Worker(new URL('./log-watcher.mjs', import.meta.url), { workerData: { url, authToken, sessionId } });
    const marks = new Promise<Array<[number, number]>>((resolve, reject) => watcher.once('message', resolve).once('error', reject));
    marks.catch(() => undefined); // awaited below; a failed watcher must not crash the run before the server is closed
    const ws = new WebSocket(`${server.origin.replace(/^http/, 'ws')}/agents/local/sessions/${sessionId}/attach`, ['pty-ws.v1']);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const closed = new Promise<void>((resolve) => {
      ws.on('message', (data: Buffer) => {
        if (data.includes('"kind":"Closed"')) resolve();
      });
    });
    const start = performance.now();
    ws.send(JSON.stringify({ op: 'pty.join_session', id: 'join', ts: new Date().toISOString(), payload: { role: 'controller' } }));
    await closed;
    await server.hub.deps.store.flush();
    const seconds = (performance.now() - start) / 1000;
    ws.close();
    watcher.postMessage('stop');
    const delays = durabilityDelays(await rowTimes(url, authToken, sessionId), await marks);
    await watcher.terminate();
    const { rows, bytes } = await committed(url, authToken, sessionId);
    console.log(JSON.stringify({ bench, url: url.replace(/\?.*$/, ''), rows, rowsPerSecond: Math.round(rows / seconds), frameMBPerSecond: round(mb(bytes) / seconds), ptyMBPerSecond: round(mb(printed) / seconds), seconds: round(seconds), durabilityDelayMs: delays }));
  } finally {
    await server.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'pty-ws-bench-'));
try {
  const url = values.url ?? `file:${join(dir, 'pty-ws.db')}`;
  await benchStore(url, values['auth-token']);
  const ptyBytes = Number(values['pty-mb']) * 1024 * 1024;
  // base64 of the zeros, plus its line breaks (76 characters a line, CR LF on a PTY).
  const base64Bytes = Math.ceil(ptyBytes / 3) * 4;
  await benchPty('pty-stream', `head -c ${ptyBytes} /dev/zero | base64`, base64Bytes + Math.ceil(base64Bytes / 76) * 2, join(dir, 'stream'), url, values['auth-token']);
  // An interactive pace: one short line every 10 ms for 3 s.
  await benchPty('pty-interactive', 'for i in $(seq 1 300); do echo line-$i; sleep 0.01; done', 300 * 10, join(dir, 'interactive'), url, values['auth-token']);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
