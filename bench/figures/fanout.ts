// Figure 3: one controller and N observers on one session; throughput per observer.
import { BenchClient } from '../lib/client.ts';
import type { BenchServer } from '../lib/server.ts';
import { median } from '../lib/stats.ts';
import { untilAll } from './throughput.ts';

export interface FanOut {
  observers: number;
  perObserverMBps: number;
  slowestObserverMBps: number;
  allComplete: boolean;
}

export async function fanOut(server: BenchServer, file: string, size: number, observers: number): Promise<FanOut> {
  const id = await server.createSession({ argv: ['/bin/sh', '-c', `stty raw -echo; sleep 2; cat ${file}; sleep 3600`] });
  const ctl = await BenchClient.connect(server.attachUrl(id), server.token, true);
  await ctl.join('controller');
  const obs: BenchClient[] = [];
  for (let i = 0; i < observers; i++) {
    const o = await BenchClient.connect(server.attachUrl(id), server.token, true);
    await o.join('observer');
    obs.push(o);
  }
  const everyone = [ctl, ...obs];
  await untilAll(everyone, size, 180_000);
  const rates = obs.map((o) => o.bytes / 1e6 / ((o.lastByteAt - o.firstByteAt) / 1000));
  for (const c of everyone) c.close();
  return { observers, perObserverMBps: median(rates), slowestObserverMBps: Math.min(...rates), allComplete: everyone.every((c) => c.bytes >= size) };
}
