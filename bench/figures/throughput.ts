// Figure 1 and 5: output throughput (binary, JSON, keyframes at default cadence) against node-pty
// read directly, and the log persisted meanwhile.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createClient } from '@libsql/client';
import pty from 'node-pty';
import { BenchClient } from '../lib/client.ts';
import { startBenchServer, type BenchServer } from '../lib/server.ts';
import { spread, type Spread } from '../lib/stats.ts';

export interface ThroughputRun {
  mbps: number;
  bytes: number;
  verified: boolean;
  rowsPerSec?: number;
  logMBps?: number;
  durabilityDelayMs?: number;
}

const catArgv = (file: string, delayS: number) => ['/bin/sh', '-c', `stty raw -echo; sleep ${delayS}; cat ${file}`];

export async function fileDigest(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** The floor: the same command read straight from node-pty in this process. */
export async function nodePtyBaseline(file: string, size: number, digest: string): Promise<ThroughputRun> {
  const h = createHash('sha256');
  let bytes = 0;
  let first = 0;
  let last = 0;
  const p = pty.spawn('/bin/sh', catArgv(file, 0.2).slice(1), { cols: 120, rows: 30, encoding: null as unknown as string });
  await new Promise<void>((resolve) => {
    p.onData((d) => {
      const buf = d as unknown as Buffer;
      const now = performance.now();
      if (bytes === 0) first = now;
      last = now;
      bytes += buf.length;
      h.update(buf);
      if (bytes >= size) resolve();
    });
    p.onExit(() => resolve());
  });
  p.kill();
  return { mbps: bytes / 1e6 / ((last - first) / 1000), bytes, verified: bytes === size && h.digest('hex') === digest };
}

export async function serverRun(server: BenchServer, file: string, size: number, digest: string, binary: boolean): Promise<ThroughputRun> {
  const id = await server.createSession({ argv: catArgv(file, 0.5) });
  const c = await BenchClient.connect(server.attachUrl(id), server.token, binary);
  await c.join('controller');
  const done = new Promise<void>((resolve) => c.on(() => c.bytes >= size && resolve()));
  await Promise.race([done, new Promise((r) => setTimeout(r, 120_000))]);
  const run: ThroughputRun = { mbps: c.bytes / 1e6 / ((c.lastByteAt - c.firstByteAt) / 1000), bytes: c.bytes, verified: c.bytes === size && c.hash.digest('hex') === digest };
  Object.assign(run, await persistence(server, id, c.firstByteAt, c.lastByteAt));
  c.close();
  return run;
}

/** Polls the database file until every logged frame of the session is committed. */
async function persistence(server: BenchServer, sessionId: string, firstByteAt: number, lastByteAt: number) {
  const db = createClient({ url: `file:${server.dir}/pty-ws.db` });
  try {
    const expected = Number((await server.getSession(sessionId)).current_sequence);
    for (;;) {
      const r = await db.execute({ sql: 'SELECT count(*) AS n, coalesce(sum(length(frame)), 0) AS b FROM session_log WHERE session_id = ?', args: [sessionId] });
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

export interface ThroughputFigures {
  baseline: Spread;
  binary: Spread;
  json: Spread;
  binaryNoCadence: Spread;
  rowsPerSec: Spread;
  logMBps: Spread;
  durabilityDelayMs: Spread;
  allVerified: boolean;
}

export async function throughput(file: string, size: number, runs: number): Promise<ThroughputFigures> {
  const digest = await fileDigest(file);
  const base: ThroughputRun[] = [];
  const bin: ThroughputRun[] = [];
  const json: ThroughputRun[] = [];
  const noCadence: ThroughputRun[] = [];
  const server = await startBenchServer();
  const quiet = await startBenchServer({ PTY_WS_KEYFRAME_INTERVAL_FRAMES: '1000000', PTY_WS_KEYFRAME_INTERVAL_SECONDS: '86400' });
  try {
    for (let i = 0; i < runs; i++) {
      base.push(await nodePtyBaseline(file, size, digest));
      bin.push(await serverRun(server, file, size, digest, true));
      json.push(await serverRun(server, file, size, digest, false));
      noCadence.push(await serverRun(quiet, file, size, digest, true));
    }
  } finally {
    await server.stop();
    await quiet.stop();
  }
  const withLog = [...bin, ...json, ...noCadence];
  return {
    baseline: spread(base.map((r) => r.mbps)),
    binary: spread(bin.map((r) => r.mbps)),
    json: spread(json.map((r) => r.mbps)),
    binaryNoCadence: spread(noCadence.map((r) => r.mbps)),
    rowsPerSec: spread(withLog.map((r) => r.rowsPerSec!)),
    logMBps: spread(withLog.map((r) => r.logMBps!)),
    durabilityDelayMs: spread(withLog.map((r) => r.durabilityDelayMs!)),
    // The plain node-pty baseline is not verified: node-pty drops the tail of a process's output at
    // exit on Linux (node-pty #72/#85), which the PTY host works around and the baseline script does not.
    allVerified: withLog.every((r) => r.verified),
  };
}
