// Figure 2: keystroke echo latency through the server against node-pty directly, the bare relay and
// ttyd. Each `…Times` function is one session's samples in ms; bench/figures/echo-rounds.ts
// interleaves them.
import pty from 'node-pty';
import { BenchClient } from '../lib/client.ts';
import type { Relay } from '../lib/relay.ts';
import type { BenchServer } from '../lib/server.ts';
import { percentile } from '../lib/stats.ts';
import type { Ttyd } from '../lib/ttyd.ts';

export const ECHO_ARGV = ['/bin/sh', '-c', "stty raw -echo; echo ready; exec cat"];

export interface Latency {
  p50: number;
  p90: number;
  p99: number;
  samples: number;
}

export const summarize = (ms: number[]): Latency => ({ p50: percentile(ms, 50), p90: percentile(ms, 90), p99: percentile(ms, 99), samples: ms.length });

const KEYS = 'abcdefghijklmnopqrstuvwxyz';

export async function nodePtyEchoTimes(samples: number, warmup: number): Promise<number[]> {
  const p = pty.spawn(ECHO_ARGV[0]!, ECHO_ARGV.slice(1), { cols: 80, rows: 24, encoding: null as unknown as string });
  let pending: ((d: Buffer) => void) | null = null;
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  p.onData((d) => {
    const buf = d as unknown as Buffer;
    if (buf.includes('ready')) ready();
    pending?.(buf);
  });
  await within(isReady, 10_000, 'the node-pty echo session');
  const times: number[] = [];
  for (let i = 0; i < samples + warmup; i++) {
    const key = KEYS[i % KEYS.length]!;
    const t0 = performance.now();
    await within(
      new Promise<void>((resolve) => {
        pending = (d) => d.includes(key) && resolve();
        p.write(key);
      }),
      10_000,
      `node-pty echo of sample ${i}`,
    );
    if (i >= warmup) times.push(performance.now() - t0);
  }
  p.kill();
  return times;
}

/**
 * Resolves once `ready` has reached the client: as live output, or already folded into the join's
 * Keyframe when the shell printed it before the join finished.
 */
export function whenReady(c: BenchClient): Promise<void> {
  return new Promise<void>((resolve) =>
    c.on((f, d) => {
      const snapshot = f?.payload.kind === 'Keyframe' ? Buffer.from(String(f.payload.snapshot), 'base64') : null;
      if (d?.includes('ready') || snapshot?.includes('ready')) resolve();
    }),
  );
}

/** Rejects after `ms`: a lost echo ends the benchmark with an error instead of a hang. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing in ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** One key at a time from `c`; the time until each of `clients` has seen its echo. */
export async function echoLoop(c: BenchClient, clients: BenchClient[], samples: number, warmup: number, binary: boolean): Promise<number[][]> {
  const times: number[][] = [];
  for (let i = 0; i < samples + warmup; i++) {
    const key = Buffer.from(KEYS[i % KEYS.length]!);
    const t0 = performance.now();
    const waits = clients.map(
      (client) =>
        new Promise<number>((resolve) => {
          const off = client.on((_f, d) => {
            if (d?.includes(key)) {
              off();
              resolve(performance.now() - t0);
            }
          });
        }),
    );
    c.sendInput(key, binary);
    const seen = await within(Promise.all(waits), 10_000, `echo of sample ${i}`);
    if (i >= warmup) times.push(seen);
  }
  return times;
}

/**
 * Echo through the server with observers (figure 3): `observers` pools every observer's receive
 * times; `lastObserver` is per key the time until the last of them had it (seen by all).
 */
export async function serverEcho(server: BenchServer, samples: number, warmup: number, observers: number, binary = true): Promise<{ controller: Latency; observers: Latency | null; lastObserver: Latency | null }> {
  const times = await serverEchoSamples(server, samples, warmup, observers, binary);
  return {
    controller: summarize(times.map((t) => t[0]!)),
    observers: observers ? summarize(times.flatMap((t) => t.slice(1))) : null,
    lastObserver: observers ? summarize(times.map((t) => Math.max(...t.slice(1)))) : null,
  };
}

/** The controller's samples alone, no observers. */
export async function serverEchoTimes(server: BenchServer, samples: number, warmup: number, binary: boolean): Promise<number[]> {
  return (await serverEchoSamples(server, samples, warmup, 0, binary)).map((t) => t[0]!);
}

async function serverEchoSamples(server: BenchServer, samples: number, warmup: number, observers: number, binary: boolean): Promise<number[][]> {
  const id = await server.createSession({ argv: ECHO_ARGV });
  const c = await BenchClient.connect(server.attachUrl(id), server.token, binary);
  const ready = whenReady(c);
  await c.join('controller');
  await within(ready, 10_000, 'the echo session');
  const obs: BenchClient[] = [];
  for (let i = 0; i < observers; i++) {
    const o = await BenchClient.connect(server.attachUrl(id), server.token, binary);
    await o.join('observer');
    obs.push(o);
  }
  const times = await echoLoop(c, [c, ...obs], samples, warmup, binary);
  for (const x of [c, ...obs]) x.close();
  return times;
}

/** Echo through the bare one-process relay (bench/lib/relay-server.ts). */
export async function relayEchoTimes(relay: Relay, samples: number, warmup: number): Promise<number[]> {
  const c = await BenchClient.connectRaw(relay.url(ECHO_ARGV));
  await within(whenReady(c), 10_000, 'the relayed echo session');
  const times = await echoLoop(c, [c], samples, warmup, true);
  c.close();
  return times.map((t) => t[0]!);
}

/** Echo through ttyd (bench/lib/ttyd.ts) started with ECHO_ARGV: the same loop, its own framing. */
export async function ttydEchoTimes(ttyd: Ttyd, samples: number, warmup: number): Promise<number[]> {
  const c = await ttyd.connect(80, 24);
  await within(whenReady(c), 10_000, 'the ttyd echo session');
  const times = await echoLoop(c, [c], samples, warmup, true);
  c.close();
  return times.map((t) => t[0]!);
}
