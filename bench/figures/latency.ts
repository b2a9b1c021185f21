// Figure 2: keystroke echo latency through the server against node-pty directly.
import pty from 'node-pty';
import { BenchClient } from '../lib/client.ts';
import type { BenchServer } from '../lib/server.ts';
import { percentile } from '../lib/stats.ts';

export const ECHO_ARGV = ['/bin/sh', '-c', "stty raw -echo; echo ready; exec cat"];

export interface Latency {
  p50: number;
  p90: number;
  p99: number;
  samples: number;
}

export const summarize = (ms: number[]): Latency => ({ p50: percentile(ms, 50), p90: percentile(ms, 90), p99: percentile(ms, 99), samples: ms.length });

const KEYS = 'abcdefghijklmnopqrstuvwxyz';

export async function nodePtyEcho(samples: number, warmup: number): Promise<Latency> {
  const p = pty.spawn(ECHO_ARGV[0]!, ECHO_ARGV.slice(1), { cols: 80, rows: 24, encoding: null as unknown as string });
  let pending: ((d: Buffer) => void) | null = null;
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  p.onData((d) => {
    const buf = d as unknown as Buffer;
    if (buf.includes('ready')) ready();
    pending?.(buf);
  });
  await isReady;
  const times: number[] = [];
  for (let i = 0; i < samples + warmup; i++) {
    const key = KEYS[i % KEYS.length]!;
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      pending = (d) => d.includes(key) && resolve();
      p.write(key);
    });
    if (i >= warmup) times.push(performance.now() - t0);
  }
  p.kill();
  return summarize(times);
}

/** Echo through the server; every observer's receive time counts too (figure 3). */
export async function serverEcho(server: BenchServer, samples: number, warmup: number, observers: number, binary = true): Promise<{ controller: Latency; observers: Latency | null }> {
  const id = await server.createSession({ argv: ECHO_ARGV });
  const c = await BenchClient.connect(server.attachUrl(id), server.token, binary);
  const ready = new Promise<void>((resolve) => c.on((_f, d) => d?.includes('ready') && resolve()));
  await c.join('controller');
  await ready;
  const obs: BenchClient[] = [];
  for (let i = 0; i < observers; i++) {
    const o = await BenchClient.connect(server.attachUrl(id), server.token, binary);
    await o.join('observer');
    obs.push(o);
  }
  const mine: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < samples + warmup; i++) {
    const key = Buffer.from(KEYS[i % KEYS.length]!);
    const t0 = performance.now();
    const waits = [c, ...obs].map(
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
    const [own, ...others] = await Promise.all(waits);
    if (i >= warmup) {
      mine.push(own!);
      theirs.push(...others);
    }
  }
  for (const x of [c, ...obs]) x.close();
  return { controller: summarize(mine), observers: observers ? summarize(theirs) : null };
}
