// `npm run bench`: figures from the real server, PTY host and libSQL file on loopback, each next to a
// baseline measured in the same run. Prints a table, then issue 20's targets with their verdicts,
// and writes bench/results/<time>.json. What each figure is judged against: bench/targets.ts.
// Knobs: BENCH_MB (payload size, default 200), BENCH_RUNS (default 3), BENCH_SESSIONS (default 1000),
// BENCH_ONLY (comma list of figures: throughput,latency,fanout,replay,scale,coldstart,frontdoor,a2a,isolation;
// `trace`, the echo path hop by hop, runs only when named), BENCH_TTYD
// (the ttyd binary measured beside pty-ws; default <repo>/../shared/bin/ttyd, its rows skipped if absent).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { a2aEcho } from './figures/a2a.ts';
import { coldStart } from './figures/cold-start.ts';
import { fanOut, ttydEchoP99 } from './figures/fanout.ts';
import { frontDoorAttach } from './figures/front-door.ts';
import { echoFigure, type EchoFigure } from './figures/echo-rounds.ts';
import { hopTrace } from './figures/hop-trace.ts';
import { isolation } from './figures/isolation.ts';
import { serverEcho } from './figures/latency.ts';
import { replay } from './figures/replay.ts';
import { scale } from './figures/scale.ts';
import { throughput } from './figures/throughput.ts';
import { f2, pcts, sp, Table } from './lib/rows.ts';
import { startBenchServer } from './lib/server.ts';
import { findTtyd } from './lib/ttyd.ts';
import { a2aRows, echoRows, fanOutRows, isolationRows, replayRows, scaleRows, throughputRows } from './targets.ts';

const MB = Number(process.env.BENCH_MB ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'throughput,latency,fanout,replay,scale,coldstart,frontdoor,a2a,isolation').split(','));
const LIMITS = { PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL: '100000', PTY_WS_MAX_CONNECTIONS_PER_INSTANCE: '100000', PTY_WS_MAX_SESSIONS_PER_PRINCIPAL: '100000', PTY_WS_MAX_OBSERVERS: '200' };

const table = new Table();
const row = table.row.bind(table);
const results: Record<string, unknown> = {};

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'pty-ws-bench-data-'));
  const started = new Date();
  console.log(`pty-ws bench — ${started.toISOString()} — ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`);
  const ttydBinary = findTtyd();
  console.log('path' in ttydBinary ? `ttyd: ${ttydBinary.path}` : `ttyd not found at ${ttydBinary.missing}: its rows are skipped (BENCH_TTYD=<path> names it)`);
  try {
    // Figure 2 runs before figure 3: fan-out's echo target is twice ttyd's p99 of figure 2.
    let echo: EchoFigure | null = null;
    const payload = ONLY.has('throughput') || ONLY.has('fanout') ? join(work, 'payload.b64') : null;
    if (payload) execFileSync('/bin/sh', ['-c', `head -c ${Math.round((MB * 1e6 * 3) / 4)} /dev/urandom | base64 -w 0 > ${payload}`]);
    const size = payload ? statSync(payload).size : 0;
    if (payload && ONLY.has('throughput')) {
      console.log(`figure 1/5: ${(size / 1e6).toFixed(0)} MB of base64 through a PTY, ${RUNS} runs each …`);
      const t = await throughput(payload, size, RUNS, ttydBinary);
      results.throughput = t;
      throughputRows(table, t);
    }
    if (ONLY.has('latency')) {
      console.log(`figure 2: echo latency, ${RUNS} interleaved rounds …`);
      echo = await echoFigure(ttydBinary, LIMITS, RUNS, 1000, 100);
      results.latency = echo;
      echoRows(table, echo);
    }
    if (payload && ONLY.has('fanout')) {
      const fanSize = Math.min(size, 20e6);
      const fanFile = join(work, 'fan.b64');
      execFileSync('/bin/sh', ['-c', `head -c ${fanSize} ${payload} > ${fanFile}`]);
      console.log('figure 3: fan-out …');
      const ttydP99 = echo ? ('skipped' in echo.ttyd ? echo.ttyd : echo.ttyd.p99) : await ttydEchoP99(ttydBinary, 200, 20);
      const server = await startBenchServer(LIMITS);
      try {
        // A first run on a fresh server pays for its warm-up (JIT, the workers' first work): not the baseline.
        await fanOut(server, fanFile, fanSize, 1);
        const one = await fanOut(server, fanFile, fanSize, 1);
        const fan: Record<string, unknown> = { one, ttydP99 };
        results.fanout = fan;
        for (const n of [10, 32]) {
          const f = await fanOut(server, fanFile, fanSize, n);
          const e = await serverEcho(server, 200, 20, n);
          fan[`observers${n}`] = { ...f, echo: e };
          fanOutRows(table, one, n, f, e, ttydP99);
        }
      } finally {
        await server.stop();
      }
    }
    if (ONLY.has('trace')) {
      console.log('figure 2t: the echo path hop by hop (PTY_HOP_TRACE_DIR) …');
      const h = await hopTrace(LIMITS, 1000, 100);
      results.hopTrace = h;
      row('2t echo, binary, traced (total)', `p50 ${f2(h.total.p50)} / p90 ${f2(h.total.p90)} / p99 ${f2(h.total.p99)} ms`, h.unmatched ? `${h.unmatched} samples unmatched` : '', null, '', null);
      for (const s of h.segments) row(`2t  ${s.segment}`, `p50 ${f2(s.p50)} / p90 ${f2(s.p90)} / p99 ${f2(s.p99)} ms`, '', null, '', null);
    }
    if (ONLY.has('replay')) {
      console.log('figure 4: replay …');
      const server = await startBenchServer({ ...LIMITS, PTY_WS_REPLAY_BUFFER_FRAMES: '1000000' });
      try {
        const small = await replay(server, 2000, RUNS * 3);
        const big = await replay(server, 100_000, RUNS * 3);
        results.replay = { small, big };
        for (const r of [small, big]) replayRows(table, r);
      } finally {
        await server.stop();
      }
    }
    if (ONLY.has('scale')) {
      console.log(`figure 6: ${SESSIONS} idle sessions …`);
      const server = await startBenchServer(LIMITS);
      try {
        const s = await scale(server, SESSIONS, 100);
        results.scale = s;
        scaleRows(table, s);
      } finally {
        await server.stop();
      }
    }
    if (ONLY.has('coldstart')) {
      console.log(`figure 7: cold start, sources vs the packed install, ${RUNS * 3} runs each …`);
      const c = await coldStart(RUNS * 3);
      results.coldStart = c;
      row('7 cold start, pty-ws serve (spawn → listening, PTY host included)', sp(c.serve.packed, 'ms', (n) => n.toFixed(0)), `${sp(c.serve.sources, 'ms', (n) => n.toFixed(0))} (sources, tsx)`, c.serve.packed.median / c.serve.sources.median, '', null);
      row('7 cold start, PTY host (spawn → listening)', sp(c.ptyHost.packed, 'ms', (n) => n.toFixed(0)), `${sp(c.ptyHost.sources, 'ms', (n) => n.toFixed(0))} (sources, tsx)`, c.ptyHost.packed.median / c.ptyHost.sources.median, '', null);
      row('7 npm pack + npm install --global of the tarball', `${(c.packMs / 1000).toFixed(1)} s + ${(c.installMs / 1000).toFixed(1)} s`, '', null, '', null);
    }
    if (ONLY.has('frontdoor')) {
      console.log('figure 8: attach through the nginx front door vs direct …');
      const server = await startBenchServer(LIMITS);
      try {
        const a = await frontDoorAttach(server, RUNS * 40, 10);
        results.frontDoor = a;
        if ('skipped' in a) row('8 attach + join through the nginx front door', `skipped: ${a.skipped}`, '', null, '', null);
        else row('8 attach + join through the nginx front door', pcts(a.frontDoor), `${pcts(a.direct)} (direct)`, a.frontDoor.p50 / a.direct.p50, 'p50 + ≤ 1 ms', a.frontDoor.p50 - a.direct.p50 <= 1);
      } finally {
        await server.stop();
      }
    }
    if (ONLY.has('a2a')) {
      console.log(`figure 9: A2A SendMessage \`echo hi\` round trips, ${RUNS * 50} per binding …`);
      const server = await startBenchServer(LIMITS);
      try {
        const a = await a2aEcho(server, RUNS * 50, 10);
        results.a2a = a;
        a2aRows(table, a);
      } finally {
        await server.stop();
      }
    }
    if (ONLY.has('isolation')) {
      console.log(`figure 10: session B's echo alone and while session A floods, ${RUNS * 2} interleaved rounds …`);
      const server = await startBenchServer(LIMITS);
      try {
        const i = await isolation(server, RUNS * 2, 200, 20);
        results.isolation = i;
        isolationRows(table, i);
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log('');
  table.print();
  table.printIssue20();
  const dir = new URL('./results/', import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, JSON.stringify({ started, machine: { cpus: cpus().length, model: cpus()[0]?.model, memory: totalmem() }, node: process.version, mb: MB, runs: RUNS, rows: table.rows, results }, null, 2));
  console.log(`\nresults: ${out}`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
