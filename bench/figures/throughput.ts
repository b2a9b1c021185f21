// Figures 1 and 5: output throughput through pty-ws (binary, JSON, binary with the keyframe cadence
// off) beside node-pty read directly, the bare relay and ttyd, in interleaved runs; what the
// router and PTY host spent per output byte (CPU by thread, bytes written to disk), and the log
// committed meanwhile.
import { BenchClient } from '../lib/client.ts';
import { logCommits, type LogCommits } from '../lib/log-commits.ts';
import { startRelay } from '../lib/relay.ts';
import { costSample, medianCost, serverCost, type ServerCost } from '../lib/server-cost.ts';
import { startBenchServer, type BenchServer } from '../lib/server.ts';
import { median, spread, type Spread } from '../lib/stats.ts';
import { startTtyd, type TtydBinary } from '../lib/ttyd.ts';
import { catArgv, fileDigest, nodePtyBaseline, relayRun, ttydRun, untilAll, type OutputRun, type ProcessRun } from './output-baselines.ts';

interface ServerRun extends OutputRun {
  cost: ServerCost;
  commits: LogCommits;
}

/**
 * One stream through the server. The cost window runs from the join until the log has committed
 * every frame, so the log-commit worker's catching up after the last byte is in it.
 */
async function serverRun(server: BenchServer, file: string, size: number, digest: string, binary: boolean): Promise<ServerRun> {
  const id = await server.createSession({ argv: catArgv(file, 0.5) });
  const c = await BenchClient.connect(server.attachUrl(id), server.token, binary);
  await c.join('controller');
  const before = costSample(server);
  await untilAll([c], size, 120_000);
  const commits = await logCommits(server, id, c.firstByteAt, c.lastByteAt);
  const after = costSample(server);
  c.close();
  await server.deleteSession(id);
  return { mbps: c.bytes / 1e6 / ((c.lastByteAt - c.firstByteAt) / 1000), bytes: c.bytes, verified: c.bytes === size && c.hash.digest('hex') === digest, cost: serverCost(before, after, c.bytes), commits };
}

/** A system's runs: MB/s, and (for a process measured whole) its CPU and disk writes per byte. */
export interface ProcessFigures {
  mbps: Spread;
  cpuPer100MB: Spread;
  diskPerByte: Spread;
  verified: boolean;
}

export interface ThroughputFigures {
  nodePty: Spread;
  relay: ProcessFigures;
  binary: Spread;
  json: Spread;
  binaryNoCadence: Spread;
  /** Medians over the runs, by part: binary (durable log and keyframes on), JSON, binary with the cadence off. */
  cost: { binary: ServerCost; json: ServerCost; binaryNoCadence: ServerCost };
  /** ttyd's runs, or why there are none (binary not found, or it did not start). */
  ttyd: ProcessFigures | { skipped: string };
  rowsPerSec: Spread;
  logMBps: Spread;
  durabilityDelayMs: Spread;
  allVerified: boolean;
}

const processFigures = (runs: ProcessRun[]): ProcessFigures => ({
  mbps: spread(runs.map((r) => r.mbps)),
  cpuPer100MB: spread(runs.map((r) => r.cpuPer100MB)),
  diskPerByte: spread(runs.map((r) => r.diskPerByte)),
  verified: runs.every((r) => r.verified),
});

/** `ttydBinary`: the ttyd to measure beside the others, or why there is none (its rows say so). */
export async function throughput(file: string, size: number, runs: number, ttydBinary: TtydBinary): Promise<ThroughputFigures> {
  const digest = await fileDigest(file);
  const base: OutputRun[] = [];
  const relayed: ProcessRun[] = [];
  const bin: ServerRun[] = [];
  const json: ServerRun[] = [];
  const noCadence: ServerRun[] = [];
  const ttydRuns: ProcessRun[] = [];
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
  const rates = (rs: OutputRun[]) => spread(rs.map((r) => r.mbps));
  return {
    nodePty: rates(base),
    relay: processFigures(relayed),
    binary: rates(bin),
    json: rates(json),
    binaryNoCadence: rates(noCadence),
    cost: { binary: medianCost(bin.map((r) => r.cost), median), json: medianCost(json.map((r) => r.cost), median), binaryNoCadence: medianCost(noCadence.map((r) => r.cost), median) },
    ttyd: ttyd && !ttydSkipped ? processFigures(ttydRuns) : { skipped: ttydSkipped },
    rowsPerSec: spread(withLog.map((r) => r.commits.rowsPerSec)),
    logMBps: spread(withLog.map((r) => r.commits.logMBps)),
    durabilityDelayMs: spread(withLog.map((r) => r.commits.durabilityDelayMs)),
    allVerified: [...withLog, ...base, ...relayed, ...ttydRuns].every((r) => r.verified),
  };
}
