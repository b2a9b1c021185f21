// Replay-log throughput: rows/s and MB/s committed to libSQL. Not part of `npm test`.
//
//   node --import tsx bench/storage-log.ts                 # both measurements on a temp file
//   node --import tsx bench/storage-log.ts --url http://127.0.0.1:8080 --auth-token "$JWT"
//
// 1. store: --frames frames of --frame-bytes appended to the store in bursts of 1000 (yielding
//    between bursts, as PTY output arrives), then flushed: the writer alone.
// 2. pty: a real router in this process, a real PTY host, a session streaming --pty-mb MiB of
//    base64 through its PTY to one attached client; measured from the join until the session's
//    Closed frame is committed (the whole path: PTY host, hub, emulator, writer).
// Prints one JSON line per measurement.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from '@libsql/client';
import WebSocket from 'ws';
import { startServer } from '../src/adapter/node/server.ts';
import { loadConfig } from '../src/config.ts';
import type { Logger } from '../src/ports.ts';
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
    const { rows } = await db.execute({ sql: 'select count(*) as n, coalesce(sum(length(frame)), 0) as b from session_log where session_id = ?', args: [sessionId] });
    return { rows: Number(rows[0]?.n), bytes: Number(rows[0]?.b) };
  } finally {
    db.close();
  }
}

async function benchStore(url: string, authToken: string | undefined): Promise<void> {
  const frames = Number(values.frames);
  const payload = 'x'.repeat(Number(values['frame-bytes']));
  const sessionId = `bench-${Date.now()}`;
  const store = await openStore({ url, authToken, logger: quiet });
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

async function benchPty(dir: string, url: string, authToken: string | undefined): Promise<void> {
  const ptyBytes = Number(values['pty-mb']) * 1024 * 1024;
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', PTY_WS_AUTH: 'off', PTY_WS_DATABASE_URL: url, PTY_WS_DATABASE_AUTH_TOKEN: authToken };
  // Retention never runs: every row written stays to be counted.
  const config = loadConfig(env, { port: '0', 'state-dir': dir, 'replay-buffer-frames': '100000000', 'replay-retention-seconds': '31536000' });
  const server = await startServer(config, { logger: quiet });
  try {
    const res = await fetch(`${server.origin}/agents/local/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ command: `head -c ${ptyBytes} /dev/zero | base64` }),
    });
    const { session_id: sessionId } = (await res.json()) as { session_id: string };
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
    const { rows, bytes } = await committed(url, authToken, sessionId);
    const printed = Math.ceil(ptyBytes / 3) * 4 + Math.ceil((ptyBytes / 57) * 1); // base64 plus its line breaks
    console.log(JSON.stringify({ bench: 'pty', url: url.replace(/\?.*$/, ''), rows, rowsPerSecond: Math.round(rows / seconds), frameMBPerSecond: round(mb(bytes) / seconds), ptyMBPerSecond: round(mb(printed) / seconds), seconds: round(seconds) }));
  } finally {
    await server.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'pty-ws-bench-'));
try {
  const url = values.url ?? `file:${join(dir, 'pty-ws.db')}`;
  await benchStore(url, values['auth-token']);
  await benchPty(dir, url, values['auth-token']);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
