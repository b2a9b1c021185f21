// Figure 3: one controller and N observers on one session; each observer's receive rate, and what
// the router spent per byte it delivered (every client's bytes together). With many observers the
// bench's client, one process on the same cores, is what limits their receive rate, not the
// router: the router's CPU per delivered byte is what says how fan-out scales.
import { BenchClient } from '../lib/client.ts';
import { sampleProcess, type ProcessSample } from '../lib/cpu.ts';
import type { BenchServer } from '../lib/server.ts';
import { median } from '../lib/stats.ts';
import { fileDigest, untilAll } from './output-baselines.ts';
import { serverEcho } from './latency.ts';

export interface FanOut {
  observers: number;
  perObserverMBps: number;
  slowestObserverMBps: number;
  allComplete: boolean;
  /** Observers that fell 16 MiB behind and had Output dropped (then got a Keyframe). */
  lagged: number;
  /** The controller got every byte, sha256-equal to the file. */
  verified: boolean;
  /** Output bytes every client (controller and observers) received. */
  deliveredBytes: number;
  /** The router's CPU seconds (every thread) per 100 MB delivered. */
  routerCpuPer100MBDelivered: number;
}

async function settled(clients: BenchClient[], size: number): Promise<void> {
  for (;;) {
    const now = performance.now();
    if (clients.every((c) => c.bytes >= size || now - c.lastByteAt > 2000)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const cpuOf = (s: ProcessSample | null) => (s ? s.threads.reduce((a, t) => a + t.cpu, 0) : NaN);

export async function fanOut(server: BenchServer, file: string, size: number, observers: number): Promise<FanOut> {
  const id = await server.createSession({ argv: ['/bin/sh', '-c', `stty raw -echo; sleep 2; cat ${file}; sleep 3600`] });
  const ctl = await BenchClient.connect(server.attachUrl(id), server.token, true);
  await ctl.join('controller');
  const obs: BenchClient[] = [];
  for (let i = 0; i < observers; i++) {
    const o = await BenchClient.connect(server.attachUrl(id), server.token, true);
    o.hashing = false;
    await o.join('observer');
    obs.push(o);
  }
  const everyone = [ctl, ...obs];
  const before = sampleProcess(server.router.pid);
  await untilAll([ctl], size, 180_000);
  // An observer that lagged had Output dropped (and got a Keyframe instead): it never reaches
  // `size`, so it is done once nothing has reached it for a while.
  await untilAll(obs, size, 0).then(() => settled(obs, size));
  const after = sampleProcess(server.router.pid);
  // An observer needs two receive times for a rate; one that lagged before its second is only counted as lagged.
  const rates = obs.filter((o) => o.lastByteAt > o.firstByteAt).map((o) => o.bytes / 1e6 / ((o.lastByteAt - o.firstByteAt) / 1000));
  for (const c of everyone) c.close();
  await server.deleteSession(id);
  const delivered = everyone.reduce((a, c) => a + c.bytes, 0);
  return {
    observers,
    verified: ctl.bytes === size && ctl.hash.digest('hex') === (await fileDigest(file)),
    perObserverMBps: median(rates),
    slowestObserverMBps: Math.min(...rates),
    allComplete: everyone.every((c) => c.bytes >= size),
    lagged: obs.filter((o) => o.bytes < size).length,
    deliveredBytes: delivered,
    routerCpuPer100MBDelivered: ((cpuOf(after) - cpuOf(before)) * 100e6) / delivered,
  };
}

export interface FanOutFigures {
  one: FanOut;
  observers: Record<10 | 32, FanOut & { echo: Awaited<ReturnType<typeof serverEcho>> }>;
}

/** 1, 10 and 32 observers on one router; the first run on a fresh router pays for its warm-up (JIT, the workers' first work) and is not the baseline. */
export async function fanOutFigure(server: BenchServer, file: string, size: number): Promise<FanOutFigures> {
  await fanOut(server, file, size, 1);
  const one = await fanOut(server, file, size, 1);
  const observers = {} as FanOutFigures['observers'];
  for (const n of [10, 32] as const) {
    const f = await fanOut(server, file, size, n);
    observers[n] = { ...f, echo: await serverEcho(server, 200, 20, n) };
  }
  return { one, observers };
}
