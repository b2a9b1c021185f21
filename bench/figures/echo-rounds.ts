// Figure 2 interleaved: every system's echo samples are taken in rounds, one fresh session per
// system per round, the order rotated each round, and pooled. On a VM shared with other work the
// load changes within seconds: measuring one system after another would compare their moments,
// not the systems.
import { startRelay } from '../lib/relay.ts';
import { startBenchServer } from '../lib/server.ts';
import { startTtyd, type TtydBinary } from '../lib/ttyd.ts';
import { ECHO_ARGV, nodePtyEchoTimes, relayEchoTimes, serverEchoTimes, summarize, ttydEchoTimes, type Latency } from './latency.ts';

/** One session of `samples` echo times in ms, after `warmup` unrecorded ones. */
export type EchoSession = (samples: number, warmup: number) => Promise<number[]>;

export async function echoRounds(systems: Record<string, EchoSession>, rounds: number, samples: number, warmup: number): Promise<Record<string, Latency>> {
  const names = Object.keys(systems);
  const pooled: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const perRound = Math.ceil(samples / Math.max(1, rounds));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length]!;
      pooled[name]!.push(...(await systems[name]!(perRound, warmup)));
    }
  }
  return Object.fromEntries(names.map((n) => [n, summarize(pooled[n]!)]));
}

export interface EchoFigure {
  nodePty: Latency;
  relay: Latency;
  binary: Latency;
  json: Latency;
  /** ttyd's, or why it was not measured. */
  ttyd: Latency | { skipped: string };
}

/** Figure 2: node-pty direct, the bare relay, ttyd (when found and it starts), pty-ws binary and JSON, interleaved. */
export async function echoFigure(ttydBinary: TtydBinary, serverEnv: Record<string, string>, rounds: number, samples: number, warmup: number): Promise<EchoFigure> {
  const relay = await startRelay();
  let skipped = 'path' in ttydBinary ? '' : `ttyd not found at ${ttydBinary.missing}`;
  const ttyd = 'path' in ttydBinary ? await startTtyd(ttydBinary.path, ECHO_ARGV).catch((e: Error) => ((skipped = e.message), null)) : null;
  try {
    const server = await startBenchServer(serverEnv);
    try {
      const systems: Record<string, EchoSession> = {
        nodePty: nodePtyEchoTimes,
        relay: (n, w) => relayEchoTimes(relay, n, w),
        binary: (n, w) => serverEchoTimes(server, n, w, true),
        json: (n, w) => serverEchoTimes(server, n, w, false),
      };
      // A ttyd that fails mid-run (it died, an echo was lost) ends its rows, not the run.
      if (ttyd)
        systems.ttyd = async (n, w) => {
          if (skipped) return [];
          try {
            return await ttydEchoTimes(ttyd, n, w);
          } catch (e) {
            skipped = `ttyd failed: ${(e as Error).message}`;
            return [];
          }
        };
      const l = await echoRounds(systems, rounds, samples, warmup);
      return { nodePty: l.nodePty!, relay: l.relay!, binary: l.binary!, json: l.json!, ttyd: l.ttyd && !skipped ? l.ttyd : { skipped } };
    } finally {
      await server.stop();
    }
  } finally {
    await relay.stop();
    await ttyd?.stop();
  }
}
