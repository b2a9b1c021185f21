// Figure 3: one controller and N observers on one session; throughput per observer.
import { BenchClient } from '../lib/client.ts';
import type { BenchServer } from '../lib/server.ts';
import { median } from '../lib/stats.ts';
import { startTtyd, type Ttyd, type TtydBinary } from '../lib/ttyd.ts';
import { ECHO_ARGV, summarize, ttydEchoTimes } from './latency.ts';
import { fileDigest, untilAll } from './throughput.ts';

export interface FanOut {
  observers: number;
  perObserverMBps: number;
  slowestObserverMBps: number;
  allComplete: boolean;
  /** Observers that fell 16 MiB behind and had Output dropped (then got a Keyframe). */
  lagged: number;
  /** The controller got every byte, sha256-equal to the file. */
  verified: boolean;
}

async function settled(clients: BenchClient[], size: number): Promise<void> {
  for (;;) {
    const now = performance.now();
    if (clients.every((c) => c.bytes >= size || now - c.lastByteAt > 2000)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

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
  await untilAll([ctl], size, 180_000);
  // An observer that lagged had Output dropped (and got a Keyframe instead): it never reaches
  // `size`, so it is done once nothing has reached it for a while.
  await untilAll(obs, size, 0).then(() => settled(obs, size));
  // An observer needs two receive times for a rate; one that lagged before its second is only counted as lagged.
  const rates = obs.filter((o) => o.lastByteAt > o.firstByteAt).map((o) => o.bytes / 1e6 / ((o.lastByteAt - o.firstByteAt) / 1000));
  for (const c of everyone) c.close();
  return { observers, verified: ctl.bytes === size && ctl.hash.digest('hex') === (await fileDigest(file)), perObserverMBps: median(rates), slowestObserverMBps: Math.min(...rates), allComplete: everyone.every((c) => c.bytes >= size), lagged: obs.filter((o) => o.bytes < size).length };
}

/**
 * ttyd's single-client echo p99 for figure 3's target when figure 2 did not run: ttyd started with
 * ECHO_ARGV, `samples` echoes after `warmup`, stopped again. Not found, not starting or failing:
 * why, and the verdict is not judged.
 */
export async function ttydEchoP99(binary: TtydBinary, samples: number, warmup: number): Promise<number | { skipped: string }> {
  if (!('path' in binary)) return { skipped: `ttyd not found at ${binary.missing}` };
  let ttyd: Ttyd | null = null;
  try {
    ttyd = await startTtyd(binary.path, ECHO_ARGV);
    return summarize(await ttydEchoTimes(ttyd, samples, warmup)).p99;
  } catch (e) {
    return { skipped: `ttyd failed: ${(e as Error).message}` };
  } finally {
    await ttyd?.stop();
  }
}
