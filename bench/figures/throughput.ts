// Figure 1 and 5: output throughput (binary, JSON, keyframes at default cadence) against node-pty
// read directly, and the log persisted meanwhile.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { cpus } from 'node:os';
import { createClient } from '@libsql/client';
import pty from 'node-pty';
import { BenchClient } from '../lib/client.ts';
import { machineBusySeconds, processCpu } from '../lib/cpu.ts';
import { startRelay, type Relay } from '../lib/relay.ts';
import { startBenchServer, type BenchServer } from '../lib/server.ts';
import { spread, type Spread } from '../lib/stats.ts';
import { startTtyd, type Ttyd } from '../lib/ttyd.ts';

export interface ThroughputRun {
  mbps: number;
  bytes: number;
  verified: boolean;
  rowsPerSec?: number;
  logMBps?: number;
  durabilityDelayMs?: number;
  cpu?: CpuShare;
}

/** CPU seconds per 100 MB of output, by part, while one server run streamed. */
export interface CpuShare {
  routerMain: number;
  routerThreads: number;
  host: number;
  client: number;
  /** The rest of the machine: `cat`, the kernel's PTY and socket work, anything else. */
  rest: number;
  /** How busy both cores were on average (1 = every core all the time). */
  machineBusy: number;
}

/** The process lingers after printing: a PTY that stays open loses none of its output at exit. */
const catArgv = (file: string, delayS: number) => ['/bin/sh', '-c', `stty raw -echo; sleep ${delayS}; cat ${file}; exec sleep 3600`];

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

/** The same through a bare one-process WebSocket relay (bench/lib/relay-server.ts): the floor of any Node design. */
export async function relayRun(relay: Relay, file: string, size: number, digest: string): Promise<ThroughputRun> {
  const c = await BenchClient.connectRaw(relay.url(catArgv(file, 0.3)));
  await untilAll([c], size, 120_000);
  c.close();
  return { mbps: c.bytes / 1e6 / ((c.lastByteAt - c.firstByteAt) / 1000), bytes: c.bytes, verified: c.bytes === size && c.hash.digest('hex') === digest };
}

/** Resolves once every client has `size` bytes, or after `ms`. */
export function untilAll(clients: BenchClient[], size: number, ms: number): Promise<unknown> {
  const all = Promise.all(clients.map((c) => new Promise<void>((resolve) => (c.bytes >= size ? resolve() : c.on(() => c.bytes >= size && resolve())))));
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([all, new Promise((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
}

/** The same through ttyd (bench/lib/ttyd.ts); `cpu` is its one process's CPU s per 100 MB. */
export async function ttydRun(ttyd: Ttyd, size: number, digest: string): Promise<ThroughputRun & { cpuPer100MB: number }> {
  const c = await ttyd.connect();
  const before = processCpu(ttyd.pid);
  await untilAll([c], size, 120_000);
  const after = processCpu(ttyd.pid);
  c.close();
  const cpu = after.main + after.threads - before.main - before.threads;
  return { mbps: c.bytes / 1e6 / ((c.lastByteAt - c.firstByteAt) / 1000), bytes: c.bytes, verified: c.bytes === size && c.hash.digest('hex') === digest, cpuPer100MB: (cpu * 100e6) / c.bytes };
}

export async function serverRun(server: BenchServer, file: string, size: number, digest: string, binary: boolean): Promise<ThroughputRun> {
  const id = await server.createSession({ argv: catArgv(file, 0.5) });
  const c = await BenchClient.connect(server.attachUrl(id), server.token, binary);
  await c.join('controller');
  const before = cpuNow(server);
  await untilAll([c], size, 120_000);
  const after = cpuNow(server);
  const run: ThroughputRun = { mbps: c.bytes / 1e6 / ((c.lastByteAt - c.firstByteAt) / 1000), bytes: c.bytes, verified: c.bytes === size && c.hash.digest('hex') === digest };
  run.cpu = cpuShare(before, after, c.bytes);
  Object.assign(run, await persistence(server, id, c.firstByteAt, c.lastByteAt));
  c.close();
  return run;
}

function cpuNow(server: BenchServer) {
  const own = process.cpuUsage();
  return { at: performance.now(), router: processCpu(server.router.pid), host: processCpu(server.hostPid()), client: (own.user + own.system) / 1e6, machine: machineBusySeconds() };
}

function cpuShare(a: ReturnType<typeof cpuNow>, b: ReturnType<typeof cpuNow>, bytes: number): CpuShare {
  const per100MB = (s: number) => (s * 100e6) / bytes;
  const routerMain = b.router.main - a.router.main;
  const routerThreads = b.router.threads - a.router.threads;
  const host = b.host.main + b.host.threads - a.host.main - a.host.threads;
  const client = b.client - a.client;
  const machine = b.machine - a.machine;
  return {
    routerMain: per100MB(routerMain),
    routerThreads: per100MB(routerThreads),
    host: per100MB(host),
    client: per100MB(client),
    rest: per100MB(machine - routerMain - routerThreads - host - client),
    machineBusy: machine / (((b.at - a.at) / 1000) * cpus().length),
  };
}

/** Polls the database file until every logged frame of the session is committed. */
async function persistence(server: BenchServer, sessionId: string, firstByteAt: number, lastByteAt: number) {
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

export interface ThroughputFigures {
  baseline: Spread;
  relay: Spread;
  relayVerified: boolean;
  /** Median CPU per 100 MB of the binary runs, by part. */
  cpu: CpuShare;
  binary: Spread;
  json: Spread;
  binaryNoCadence: Spread;
  /** ttyd's runs, or why there are none (binary not found, or it did not start). */
  ttyd: { mbps: Spread; verified: boolean; cpuPer100MB: Spread } | { skipped: string };
  rowsPerSec: Spread;
  logMBps: Spread;
  durabilityDelayMs: Spread;
  allVerified: boolean;
}

/** `ttydBinary`: the ttyd to measure beside the others, or why there is none (its rows say so). */
export async function throughput(file: string, size: number, runs: number, ttydBinary: { path: string } | { missing: string }): Promise<ThroughputFigures> {
  const digest = await fileDigest(file);
  const base: ThroughputRun[] = [];
  const relayed: ThroughputRun[] = [];
  const bin: ThroughputRun[] = [];
  const json: ThroughputRun[] = [];
  const noCadence: ThroughputRun[] = [];
  const ttydRuns: Array<Awaited<ReturnType<typeof ttydRun>>> = [];
  let ttydSkipped = 'path' in ttydBinary ? '' : `ttyd not found at ${ttydBinary.missing}`;
  const server = await startBenchServer();
  const quiet = await startBenchServer({ PTY_WS_KEYFRAME_INTERVAL_FRAMES: '1000000', PTY_WS_KEYFRAME_INTERVAL_SECONDS: '86400' });
  const relay = await startRelay();
  // The same argv as the others; a ttyd that cannot start (a missing library) skips its rows, not the run.
  const ttyd = 'path' in ttydBinary ? await startTtyd(ttydBinary.path, catArgv(file, 0.3)).catch((e: Error) => ((ttydSkipped = e.message), null)) : null;
  try {
    for (let i = 0; i < runs; i++) {
      base.push(await nodePtyBaseline(file, size, digest));
      relayed.push(await relayRun(relay, file, size, digest));
      // A ttyd that fails mid-run (it died, it refused the socket) ends its rows, not the run.
      if (ttyd && !ttydSkipped) {
        try {
          ttydRuns.push(await ttydRun(ttyd, size, digest));
        } catch (e) {
          ttydSkipped = `ttyd failed: ${(e as Error).message}`;
        }
      }
      bin.push(await serverRun(server, file, size, digest, true));
      json.push(await serverRun(server, file, size, digest, false));
      noCadence.push(await serverRun(quiet, file, size, digest, true));
    }
  } finally {
    await server.stop();
    await quiet.stop();
    await relay.stop();
    await ttyd?.stop();
  }
  const withLog = [...bin, ...json, ...noCadence];
  const mid = (pick: (c: CpuShare) => number) => spread(bin.map((r) => pick(r.cpu!))).median;
  return {
    baseline: spread(base.map((r) => r.mbps)),
    relay: spread(relayed.map((r) => r.mbps)),
    relayVerified: relayed.every((r) => r.verified),
    cpu: {
      routerMain: mid((c) => c.routerMain),
      routerThreads: mid((c) => c.routerThreads),
      host: mid((c) => c.host),
      client: mid((c) => c.client),
      rest: mid((c) => c.rest),
      machineBusy: mid((c) => c.machineBusy),
    },
    binary: spread(bin.map((r) => r.mbps)),
    json: spread(json.map((r) => r.mbps)),
    binaryNoCadence: spread(noCadence.map((r) => r.mbps)),
    ttyd: ttyd && !ttydSkipped ? { mbps: spread(ttydRuns.map((r) => r.mbps)), verified: ttydRuns.every((r) => r.verified), cpuPer100MB: spread(ttydRuns.map((r) => r.cpuPer100MB)) } : { skipped: ttydSkipped },
    rowsPerSec: spread(withLog.map((r) => r.rowsPerSec!)),
    logMBps: spread(withLog.map((r) => r.logMBps!)),
    durabilityDelayMs: spread(withLog.map((r) => r.durabilityDelayMs!)),
    allVerified: [...withLog, ...base, ...relayed, ...ttydRuns].every((r) => r.verified),
  };
}
