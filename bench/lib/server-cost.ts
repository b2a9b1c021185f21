// What the router and the PTY host spent between two moments, by process and thread, per output
// byte: CPU seconds per 100 MB and bytes written to disk per byte (bench/lib/cpu.ts reads /proc).
//
// Node 20 names none of its threads, so they are told apart by what the router does to them: the
// screen worker and the log-commit worker lower their own priority (BACKGROUND_NICENESS, docs/
// architecture.md "Router flow control"), and of those two the log-commit worker is the one that
// writes the database. Every other router thread (V8's GC and compiler threads, libuv's pool) is
// "other threads".
import { cpus } from 'node:os';
import { BACKGROUND_NICENESS } from '../../src/adapter/node/background-thread.ts';
import { machineBusySeconds, sampleProcess, threadDeltas, type ProcessSample, type ThreadSample } from './cpu.ts';
import type { BenchServer } from './server.ts';

export interface CostSample {
  at: number;
  router: ProcessSample | null;
  host: ProcessSample | null;
  /** The bench process's own CPU seconds (the measuring client). */
  client: number;
  machine: number;
}

/** CPU seconds per 100 MB of output, by part. */
export interface CpuShare {
  routerMain: number;
  logWorker: number;
  screenWorker: number;
  /** The router's other threads: V8 (GC, compiler) and libuv. */
  routerOther: number;
  hostMain: number;
  hostThreads: number;
  /** Router and PTY host, every thread. */
  server: number;
  client: number;
  /** The rest of the machine: `cat`, the kernel's PTY and socket work, anything else. */
  rest: number;
  /** How busy all cores were on average (1 = every core all the time). */
  machineBusy: number;
}

/**
 * Bytes written to disk per output byte (bench/lib/cpu.ts, DiskWrites). `server` is what reached
 * (or will reach) the disk: every page the router and PTY host dirtied, less what was truncated
 * while still dirty — the journal's segments are emptied once committed, most before writeback
 * (docs/protocol.md §3.4: no fsync). The parts are pages dirtied, by thread.
 */
export interface DiskShare {
  /** The router's main thread: the write-before-send journal. */
  routerMain: number;
  /** The log-commit worker: SQLite's WAL and its checkpoints into the database file. */
  logWorker: number;
  routerOther: number;
  host: number;
  /** Router and PTY host, every thread, those that exited included: pages dirtied. */
  dirtied: number;
  /** Of those, truncated before they reached the disk. */
  cancelled: number;
  /** dirtied − cancelled. */
  server: number;
}

export interface ServerCost {
  cpu: CpuShare;
  disk: DiskShare;
}

export function costSample(server: BenchServer): CostSample {
  const own = process.cpuUsage();
  return { at: performance.now(), router: sampleProcess(server.router.pid), host: sampleProcess(server.hostPid()), client: (own.user + own.system) / 1e6, machine: machineBusySeconds() };
}

const sum = (ts: ThreadSample[], pick: (t: ThreadSample) => number) => ts.reduce((a, t) => a + pick(t), 0);

/** The router's threads by part; `logWorker` is the background thread that wrote the most to disk. */
function routerParts(a: ProcessSample, b: ProcessSample) {
  const threads = threadDeltas(a, b);
  const main = threads.filter((t) => t.tid === b.pid);
  const background = threads.filter((t) => t.tid !== b.pid && t.nice >= BACKGROUND_NICENESS).sort((x, y) => y.dirtied - x.dirtied);
  const log = background.slice(0, 1);
  const screen = background.slice(1);
  const other = threads.filter((t) => t.tid !== b.pid && t.nice < BACKGROUND_NICENESS);
  return { main, log, screen, other, all: threads, dirtied: b.disk.dirtied - a.disk.dirtied, cancelled: b.disk.cancelled - a.disk.cancelled };
}

/** Per output byte between `a` and `b`; NaN where a process could not be read. */
export function serverCost(a: CostSample, b: CostSample, bytes: number): ServerCost {
  const per100MB = (s: number) => (s * 100e6) / bytes;
  const perByte = (n: number) => n / bytes;
  const r = a.router && b.router ? routerParts(a.router, b.router) : null;
  const host = a.host && b.host && a.host.pid === b.host.pid ? threadDeltas(a.host, b.host) : null;
  const hostMain = host ? sum(host.filter((t) => t.tid === b.host!.pid), (t) => t.cpu) : NaN;
  const hostAll = host ? sum(host, (t) => t.cpu) : NaN;
  const routerAll = r ? sum(r.all, (t) => t.cpu) : NaN;
  const cpu = (pick: (x: NonNullable<typeof r>) => ThreadSample[]) => (r ? per100MB(sum(pick(r), (t) => t.cpu)) : NaN);
  const disk = (pick: (x: NonNullable<typeof r>) => ThreadSample[]) => (r ? perByte(sum(pick(r), (t) => t.dirtied)) : NaN);
  const client = b.client - a.client;
  const machine = b.machine - a.machine;
  const hostDirtied = a.host && b.host && host ? b.host.disk.dirtied - a.host.disk.dirtied : NaN;
  const hostCancelled = a.host && b.host && host ? b.host.disk.cancelled - a.host.disk.cancelled : NaN;
  const dirtied = (r ? r.dirtied : NaN) + hostDirtied;
  const cancelled = (r ? r.cancelled : NaN) + hostCancelled;
  return {
    cpu: {
      routerMain: cpu((x) => x.main),
      logWorker: cpu((x) => x.log),
      screenWorker: cpu((x) => x.screen),
      routerOther: cpu((x) => x.other),
      hostMain: per100MB(hostMain),
      hostThreads: per100MB(hostAll - hostMain),
      server: per100MB(routerAll + hostAll),
      client: per100MB(client),
      rest: per100MB(machine - routerAll - hostAll - client),
      machineBusy: machine / (((b.at - a.at) / 1000) * cpus().length),
    },
    disk: {
      routerMain: disk((x) => x.main),
      logWorker: disk((x) => x.log),
      routerOther: r ? perByte(r.dirtied - sum([...r.main, ...r.log], (t) => t.dirtied)) : NaN,
      host: perByte(hostDirtied),
      dirtied: perByte(dirtied),
      cancelled: perByte(cancelled),
      server: perByte(dirtied - cancelled),
    },
  };
}

/** The median of each part over runs. */
export function medianCost(runs: ServerCost[], median: (xs: number[]) => number): ServerCost {
  const of = <T extends object>(pick: (c: ServerCost) => T): T => {
    const keys = Object.keys(pick(runs[0]!)) as Array<keyof T>;
    return Object.fromEntries(keys.map((k) => [k, median(runs.map((c) => pick(c)[k] as number))])) as T;
  };
  return { cpu: of((c) => c.cpu), disk: of((c) => c.disk) };
}
