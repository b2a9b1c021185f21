// `npm run bench`: figures from the real server, PTY host and libSQL file on loopback, each next to a
// baseline measured in the same run. Prints a table and writes bench/results/<time>.json.
// Knobs: BENCH_MB (payload size, default 200), BENCH_RUNS (default 3), BENCH_SESSIONS (default 1000),
// BENCH_ONLY (comma list of figures: throughput,latency,fanout,replay,scale,coldstart,frontdoor; `trace`, the
// echo path hop by hop, runs only when named), BENCH_TTYD
// (the ttyd binary measured beside pty-ws; default <repo>/../shared/bin/ttyd, its rows skipped if absent).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { coldStart } from './figures/cold-start.ts';
import { fanOut } from './figures/fanout.ts';
import { frontDoorAttach } from './figures/front-door.ts';
import { echoFigure } from './figures/echo-rounds.ts';
import { hopTrace } from './figures/hop-trace.ts';
import { serverEcho, type Latency } from './figures/latency.ts';
import { replay } from './figures/replay.ts';
import { scale } from './figures/scale.ts';
import { throughput } from './figures/throughput.ts';
import { startBenchServer } from './lib/server.ts';
import type { Spread } from './lib/stats.ts';
import { findTtyd } from './lib/ttyd.ts';

const MB = Number(process.env.BENCH_MB ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'throughput,latency,fanout,replay,scale,coldstart,frontdoor').split(','));
const LIMITS = { PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL: '100000', PTY_WS_MAX_CONNECTIONS_PER_INSTANCE: '100000', PTY_WS_MAX_SESSIONS_PER_PRINCIPAL: '100000', PTY_WS_MAX_OBSERVERS: '200' };

interface Row {
  figure: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
  verdict: string;
}
const rows: Row[] = [];
const results: Record<string, unknown> = {};
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const sp = (s: Spread, unit: string, fmt = f1) => `${fmt(s.median)} ${unit} (${fmt(s.min)}–${fmt(s.max)})`;
const verdict = (ok: boolean) => (ok ? 'meets' : 'MISSES target');

function row(figure: string, value: string, baseline: string, ratio: number | null, target: string, ok: boolean | null): void {
  const r = { figure, value, baseline, ratio: ratio === null ? '' : `${f2(ratio)}×`, target, verdict: ok === null ? '' : verdict(ok) };
  rows.push(r);
  // Each figure as soon as it is known: a long run that fails later still leaves these.
  console.log(`  ${r.figure}: ${r.value}${r.baseline ? ` | baseline ${r.baseline}` : ''}${r.ratio ? ` | ${r.ratio}` : ''}${r.verdict ? ` | ${r.verdict}` : ''}`);
}

function printTable(): void {
  const cols: Array<keyof Row> = ['figure', 'value', 'baseline', 'ratio', 'target', 'verdict'];
  const width = (c: keyof Row) => Math.max(c.length, ...rows.map((r) => r[c].length));
  const line = (r: Record<keyof Row, string>) => cols.map((c) => r[c].padEnd(width(c))).join(' │ ');
  console.log(line({ figure: 'figure', value: 'value (median, min–max)', baseline: 'same-run baseline', ratio: 'ratio', target: 'target', verdict: '' }));
  console.log(cols.map((c) => '─'.repeat(width(c))).join('─┼─'));
  for (const r of rows) console.log(line(r));
}

/** Figure 2 against ttyd (issue 20): its echo, then each mode's p50 and p99 as a ratio to ttyd's. */
function echoVsTtyd(ttyd: Latency, base: Latency, modes: Record<string, Latency>): void {
  row('2 echo latency, ttyd (C, one process)', `p50 ${f2(ttyd.p50)} / p90 ${f2(ttyd.p90)} / p99 ${f2(ttyd.p99)} ms`, `p50 ${f2(base.p50)} / p99 ${f2(base.p99)} ms`, ttyd.p99 / base.p99, '', null);
  for (const [mode, l] of Object.entries(modes)) {
    for (const p of ['p50', 'p99'] as const) {
      row(`2 echo ${p}, ${mode} vs ttyd`, `${f2(l[p])} ms`, `${f2(ttyd[p])} ms (ttyd)`, l[p] / ttyd[p], `≤ ttyd's ${p}`, l[p] <= ttyd[p]);
    }
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'pty-ws-bench-data-'));
  const started = new Date();
  console.log(`pty-ws bench — ${started.toISOString()} — ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`);
  const ttydBinary = findTtyd();
  console.log('path' in ttydBinary ? `ttyd: ${ttydBinary.path}` : `ttyd not found at ${ttydBinary.missing}: its rows are skipped (BENCH_TTYD=<path> names it)`);
  try {
    if (ONLY.has('throughput') || ONLY.has('fanout')) {
      const file = join(work, 'payload.b64');
      execFileSync('/bin/sh', ['-c', `head -c ${Math.round((MB * 1e6 * 3) / 4)} /dev/urandom | base64 -w 0 > ${file}`]);
      const size = statSync(file).size;
      if (ONLY.has('throughput')) {
        console.log(`figure 1/5: ${(size / 1e6).toFixed(0)} MB of base64 through a PTY, ${RUNS} runs each …`);
        const t = await throughput(file, size, RUNS, ttydBinary);
        results.throughput = t;
        const base = t.baseline.median;
        row('1 output, bare one-process WS relay (floor of a Node design)', sp(t.relay, 'MB/s'), sp(t.baseline, 'MB/s'), t.relay.median / base, '', null);
        row('1 output, binary (PW1O)', sp(t.binary, 'MB/s'), sp(t.baseline, 'MB/s'), t.binary.median / base, '≥ 0.8× (stretch 0.9×)', t.binary.median / base >= 0.8);
        row('1 output, JSON/base64', sp(t.json, 'MB/s'), sp(t.baseline, 'MB/s'), t.json.median / base, '≥ 0.5×', t.json.median / base >= 0.5);
        row('1 output, binary, keyframe cadence off', sp(t.binaryNoCadence, 'MB/s'), sp(t.baseline, 'MB/s'), t.binaryNoCadence.median / base, 'keyframes on ≥ 0.7× (row 1)', null);
        if ('skipped' in t.ttyd) row('1 output, ttyd', `skipped: ${t.ttyd.skipped}`, '', null, '', null);
        else {
          const ttyd = t.ttyd.mbps.median;
          row('1 output, ttyd (C, one process)', `${sp(t.ttyd.mbps, 'MB/s')}${t.ttyd.verified ? '' : ', bytes NOT verified'}`, sp(t.baseline, 'MB/s'), ttyd / base, '', null);
          row('1 output, binary (PW1O) vs ttyd', sp(t.binary, 'MB/s'), sp(t.ttyd.mbps, 'MB/s (ttyd)'), t.binary.median / ttyd, '≥ 1.25× ttyd', t.binary.median / ttyd >= 1.25);
          row('1 output, JSON/base64 vs ttyd', sp(t.json, 'MB/s'), sp(t.ttyd.mbps, 'MB/s (ttyd)'), t.json.median / ttyd, '≥ 1.0× ttyd', t.json.median / ttyd >= 1.0);
          const ours = t.cpu.routerMain + t.cpu.routerThreads + t.cpu.host;
          row('1 server CPU s per 100 MB, ttyd vs pty-ws binary', `ttyd ${sp(t.ttyd.cpuPer100MB, 's', f2)}`, `pty-ws router + PTY host ${f2(ours)} s`, ours / t.ttyd.cpuPer100MB.median, '', null);
        }
        row('1 bytes verified (sha256, every run)', t.allVerified ? 'yes' : 'NO', '', null, 'yes', t.allVerified);
        const c = t.cpu;
        row(
          '1 CPU s per 100 MB, binary (what bounds it)',
          `router main ${f2(c.routerMain)}, router threads ${f2(c.routerThreads)}, PTY host ${f2(c.host)}, client ${f2(c.client)}, rest ${f2(c.rest)}`,
          `both cores ${(c.machineBusy * 100).toFixed(0)} % busy`,
          null,
          '',
          null,
        );
        row('5 log rows committed', sp(t.rowsPerSec, 'rows/s', (n) => n.toFixed(0)), '', null, '', null);
        row('5 log bytes committed', sp(t.logMBps, 'MB/s'), '', null, '', null);
        row('5 durability delay after last byte', sp(t.durabilityDelayMs, 'ms'), '', null, '', null);
      }
      if (ONLY.has('fanout')) {
        const fanSize = Math.min(size, 20e6);
        const fanFile = join(work, 'fan.b64');
        execFileSync('/bin/sh', ['-c', `head -c ${fanSize} ${file} > ${fanFile}`]);
        console.log('figure 3: fan-out …');
        const server = await startBenchServer(LIMITS);
        try {
          // A first run on a fresh server pays for its warm-up (JIT, the workers' first work): not the baseline.
          await fanOut(server, fanFile, fanSize, 1);
          const one = await fanOut(server, fanFile, fanSize, 1);
          results.fanout = { one };
          for (const n of [10, 32]) {
            const f = await fanOut(server, fanFile, fanSize, n);
            const echo = await serverEcho(server, 200, 20, n);
            (results.fanout as Record<string, unknown>)[`observers${n}`] = { ...f, echo };
            row(`3 fan-out ${n} observers, per observer`, `${f1(f.perObserverMBps)} MB/s (slowest ${f1(f.slowestObserverMBps)})${f.lagged ? `, ${f.lagged} of ${n} lagged` : ''}${f.verified ? '' : ', controller bytes NOT verified'}`, `${f1(one.perObserverMBps)} MB/s (1 observer)`, f.perObserverMBps / one.perObserverMBps, '≥ 0.5×', f.perObserverMBps / one.perObserverMBps >= 0.5);
            row(`3 fan-out ${n} observers, echo p99 seen by all`, `${f2(echo.observers!.p99)} ms (p50 ${f2(echo.observers!.p50)})`, `${f2(echo.controller.p99)} ms (controller)`, echo.observers!.p99 / echo.controller.p99, '≤ 5 ms', echo.observers!.p99 <= 5);
          }
        } finally {
          await server.stop();
        }
      }
    }
    if (ONLY.has('latency')) {
      console.log(`figure 2: echo latency, ${RUNS} interleaved rounds …`);
      const l = await echoFigure(ttydBinary, LIMITS, RUNS, 1000, 100);
      results.latency = l;
      const base = l.nodePty;
      const pcts = (x: Latency) => `p50 ${f2(x.p50)} / p90 ${f2(x.p90)} / p99 ${f2(x.p99)} ms`;
      const floor = `p50 ${f2(base.p50)} / p99 ${f2(base.p99)} ms`;
      row('2 echo latency, bare one-process WS relay', pcts(l.relay), floor, l.relay.p99 / base.p99, '', null);
      row('2 echo latency, binary', pcts(l.binary), floor, l.binary.p99 / base.p99, 'p99 ≤ 2 ms', l.binary.p99 <= 2);
      row('2 echo latency, JSON', pcts(l.json), floor, l.json.p99 / base.p99, 'p99 ≤ 2 ms', l.json.p99 <= 2);
      if ('skipped' in l.ttyd) row('2 echo latency, ttyd', `skipped: ${l.ttyd.skipped}`, '', null, '', null);
      else echoVsTtyd(l.ttyd, base, { binary: l.binary, JSON: l.json });
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
        for (const r of [small, big]) {
          row(`4 replay ${r.replayedFrames} frames of ~${r.frameBytes.toFixed(0)} B → Keyframe (${r.retained} retained)`, sp(r.replay1000, 'ms'), `${sp(r.joinWithoutReplay, 'ms')} (join, no replay)`, r.replay1000.median / r.joinWithoutReplay.median, '≤ 50 ms', r.replay1000.median <= 50);
        }
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
        const mb = (b: number) => `${(b / 2 ** 20).toFixed(2)} MiB`;
        row('6 RSS per idle session (router + host)', `${mb(s.perIdleSessionBytes)} (router ${mb(s.perIdleSessionRouterBytes)}, host ${mb(s.perIdleSessionHostBytes)})`, `${mb(s.rssBaseline.router)} router, ${mb(s.rssBaseline.host)} host at start`, null, '≤ 5 MB', s.perIdleSessionBytes <= 5e6);
        row('6 RSS per attached client (router)', mb(s.perClientBytes), '', null, '', null);
        row('6 create a session (REST)', sp(s.createMs, 'ms', f2), '', null, '', null);
        row('6 attach + join (first join spawns)', sp(s.attachMs, 'ms', f2), '', null, '', null);
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
        else {
          const pcts = (x: Latency) => `p50 ${f2(x.p50)} / p90 ${f2(x.p90)} / p99 ${f2(x.p99)} ms`;
          row('8 attach + join through the nginx front door', pcts(a.frontDoor), `${pcts(a.direct)} (direct)`, a.frontDoor.p50 / a.direct.p50, 'p50 + ≤ 1 ms', a.frontDoor.p50 - a.direct.p50 <= 1);
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log('');
  printTable();
  const dir = new URL('./results/', import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, JSON.stringify({ started, machine: { cpus: cpus().length, model: cpus()[0]?.model, memory: totalmem() }, node: process.version, mb: MB, runs: RUNS, rows, results }, null, 2));
  console.log(`\nresults: ${out}`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
