// `npm run bench`: figures from the real server, PTY host and libSQL file on loopback, each next to
// baselines measured in the same run. Prints each figure as it is known, a table, then every
// target (bench/targets.ts) with its verdict, and writes bench/results/<time>.json.
// Knobs: BENCH_MB (payload size, default 200), BENCH_RUNS (default 3), BENCH_SESSIONS (default 1000),
// BENCH_ONLY (comma list of figures: throughput,latency,fanout,replay,scale,stalled,coldstart,frontdoor,a2a,isolation;
// `trace`, the echo path hop by hop, runs only when named), BENCH_TTYD
// (the ttyd binary measured beside pty-ws; default <repo>/../shared/bin/ttyd, its rows skipped if absent).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { a2aEcho } from './figures/a2a.ts';
import { coldStart } from './figures/cold-start.ts';
import { echoFigure } from './figures/echo-rounds.ts';
import { fanOutFigure } from './figures/fanout.ts';
import { frontDoorAttach } from './figures/front-door.ts';
import { hopTrace } from './figures/hop-trace.ts';
import { isolation } from './figures/isolation.ts';
import { replayFigure } from './figures/replay.ts';
import { scale } from './figures/scale.ts';
import { stalledJoiners } from './figures/stalled-joiners.ts';
import { throughput } from './figures/throughput.ts';
import { echoRows, isolationRows } from './report/echo.ts';
import { fanOutRows } from './report/fanout.ts';
import { replayRows, scaleRows, stalledRows } from './report/memory.ts';
import { a2aRows, coldStartRows, frontDoorRows, hopTraceRows } from './report/other.ts';
import { outputRows } from './report/output.ts';
import { Table } from './lib/rows.ts';
import { startBenchServer, type BenchServer } from './lib/server.ts';
import { findTtyd, type TtydBinary } from './lib/ttyd.ts';

const MB = Number(process.env.BENCH_MB ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const DEFAULT = 'throughput,latency,fanout,replay,scale,stalled,coldstart,frontdoor,a2a,isolation';
const ONLY = new Set((process.env.BENCH_ONLY ?? DEFAULT).split(','));
const LIMITS = { PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL: '100000', PTY_WS_MAX_CONNECTIONS_PER_INSTANCE: '100000', PTY_WS_MAX_SESSIONS_PER_PRINCIPAL: '100000', PTY_WS_MAX_OBSERVERS: '200' };

interface Run {
  table: Table;
  results: Record<string, unknown>;
  ttyd: TtydBinary;
  work: string;
  /** BENCH_MB of base64 of random bytes, made once for the figures that stream it. */
  payload(): { file: string; size: number };
}

/** A router and PTY host for one figure, stopped after it whatever happens. */
async function withServer<T>(env: Record<string, string>, use: (server: BenchServer) => Promise<T>): Promise<T> {
  const server = await startBenchServer({ ...LIMITS, ...env });
  try {
    return await use(server);
  } finally {
    await server.stop();
  }
}

/** The figures in the order they run: each prints what it is about to do, then its rows. */
const FIGURES: Array<[string, (r: Run) => Promise<void>]> = [
  ['throughput', async (r) => {
    const { file, size } = r.payload();
    console.log(`figures 1 and 5: ${(size / 1e6).toFixed(0)} MB of base64 through a PTY, ${RUNS} runs each …`);
    const t = await throughput(file, size, RUNS, r.ttyd);
    r.results.throughput = t;
    outputRows(r.table, t);
  }],
  ['latency', async (r) => {
    console.log(`figure 2: echo latency, ${RUNS} interleaved rounds …`);
    const echo = await echoFigure(r.ttyd, LIMITS, RUNS, 1000, 100);
    r.results.latency = echo;
    echoRows(r.table, echo);
  }],
  ['fanout', async (r) => {
    const { file, size } = r.payload();
    const fanSize = Math.min(size, 20e6);
    const fanFile = join(r.work, 'fan.b64');
    execFileSync('/bin/sh', ['-c', `head -c ${fanSize} ${file} > ${fanFile}`]);
    console.log(`figure 3: fan-out of ${(fanSize / 1e6).toFixed(0)} MB to 1, 10 and 32 observers …`);
    const f = await withServer({}, (server) => fanOutFigure(server, fanFile, fanSize));
    r.results.fanout = f;
    fanOutRows(r.table, f);
  }],
  ['trace', async (r) => {
    console.log('figure 2t: the echo path hop by hop (PTY_HOP_TRACE_DIR) …');
    const h = await hopTrace(LIMITS, 1000, 100);
    r.results.hopTrace = h;
    hopTraceRows(r.table, h);
  }],
  ['replay', async (r) => {
    console.log('figure 4: replay of 1000 frames at each frame size …');
    const rs = await withServer({ PTY_WS_REPLAY_BUFFER_FRAMES: '1000000' }, (server) => replayFigure(server, RUNS * 3));
    r.results.replay = rs;
    for (const x of rs) replayRows(r.table, x);
  }],
  ['scale', async (r) => {
    console.log(`figure 6: ${SESSIONS} idle sessions …`);
    const s = await withServer({}, (server) => scale(server, SESSIONS, 100));
    r.results.scale = s;
    scaleRows(r.table, s);
  }],
  ['stalled', async (r) => {
    console.log('figure 11: joiners that never read, live and asking for the whole log …');
    const s = await stalledJoiners(LIMITS);
    r.results.stalledJoiners = s;
    stalledRows(r.table, s);
  }],
  ['coldstart', async (r) => {
    console.log(`figure 7: cold start, sources vs the packed install, ${RUNS * 3} runs each …`);
    const c = await coldStart(RUNS * 3);
    r.results.coldStart = c;
    coldStartRows(r.table, c);
  }],
  ['frontdoor', async (r) => {
    console.log('figure 8: attach through the nginx front door vs direct …');
    const a = await withServer({}, (server) => frontDoorAttach(server, RUNS * 40, 10));
    r.results.frontDoor = a;
    frontDoorRows(r.table, a);
  }],
  ['a2a', async (r) => {
    console.log(`figure 9: A2A SendMessage \`echo hi\` round trips, ${RUNS * 50} per binding …`);
    const a = await withServer({}, (server) => a2aEcho(server, RUNS * 50, 10));
    r.results.a2a = a;
    a2aRows(r.table, a);
  }],
  ['isolation', async (r) => {
    console.log(`figure 10: session B's echo alone and while session A floods, ${RUNS * 2} interleaved rounds …`);
    const i = await withServer({}, (server) => isolation(server, RUNS * 2, 200, 20));
    r.results.isolation = i;
    isolationRows(r.table, i);
  }],
];

async function main(): Promise<void> {
  const unknown = [...ONLY].filter((n) => !FIGURES.some(([name]) => name === n));
  if (unknown.length) throw new Error(`BENCH_ONLY: no figure ${unknown.join(', ')} (figures: ${FIGURES.map(([n]) => n).join(', ')})`);
  const work = mkdtempSync(join(tmpdir(), 'pty-ws-bench-data-'));
  const started = new Date();
  console.log(`pty-ws bench — ${started.toISOString()} — ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, load average ${loadavg()[0]!.toFixed(1)}`);
  const ttyd = findTtyd();
  console.log('path' in ttyd ? `ttyd: ${ttyd.path}` : `ttyd not found at ${ttyd.missing}: its rows are skipped (BENCH_TTYD=<path> names it)`);
  let payload: { file: string; size: number } | null = null;
  const run: Run = {
    table: new Table(),
    results: {},
    ttyd,
    work,
    payload() {
      if (!payload) {
        const file = join(work, 'payload.b64');
        execFileSync('/bin/sh', ['-c', `head -c ${Math.round((MB * 1e6 * 3) / 4)} /dev/urandom | base64 -w 0 > ${file}`]);
        payload = { file, size: statSync(file).size };
      }
      return payload;
    },
  };
  try {
    for (const [name, figure] of FIGURES) if (ONLY.has(name)) await figure(run);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log('');
  run.table.print();
  run.table.printTargets();
  console.log(`load average at the end ${loadavg()[0]!.toFixed(1)}`);
  const dir = new URL('./results/', import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, JSON.stringify({ started, machine: { cpus: cpus().length, model: cpus()[0]?.model, memory: totalmem() }, node: process.version, mb: MB, runs: RUNS, rows: run.table.rows, results: run.results }, null, 2));
  console.log(`\nresults: ${out}`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
