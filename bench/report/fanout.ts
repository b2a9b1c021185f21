// Figure 3: 10 observers by their receive rate; 32 by what the router spends per byte it delivers
// (with that many, the bench's own client limits the receive rate, not the router).
import type { FanOut, FanOutFigures } from '../figures/fanout.ts';
import { f1, f2, type Table } from '../lib/rows.ts';
import { TARGETS as T } from '../targets.ts';

const rate = (f: FanOut) => `${f1(f.perObserverMBps)} MB/s median, slowest ${f1(f.slowestObserverMBps)}${f.lagged ? `, ${f.lagged} of ${f.observers} lagged` : ''}${f.verified ? '' : ', controller bytes NOT verified'}`;
const cpu = (f: FanOut) => `${f2(f.routerCpuPer100MBDelivered)} s per 100 MB delivered (${f1(f.deliveredBytes / 1e6)} MB)`;

export function fanOutRows(t: Table, { one, observers }: FanOutFigures): void {
  const ten = observers[10];
  const many = observers[32];
  const base = `${f1(one.perObserverMBps)} MB/s (1 observer)`;
  // The slowest counts; a lagged observer missed Output, so it misses too.
  const share = ten.slowestObserverMBps / one.perObserverMBps;
  t.row('3 fan-out, 10 observers, each (the slowest)', rate(ten), base, share, `each ≥ ${T.tenObserversShare}× 1 observer`, ten.lagged === 0 && share >= T.tenObserversShare);
  t.row('3 fan-out, 32 observers, each (the slowest; bound by the bench client)', rate(many), base, many.slowestObserverMBps / one.perObserverMBps, '', null);
  t.row('3 fan-out, router CPU per delivered byte, 1 observer', cpu(one), '', null, '', null);
  t.row('3 fan-out, router CPU per delivered byte, 10 observers', cpu(ten), '', null, '', null);
  // What one more delivered copy costs the router, between two observer counts (its fixed work per source byte cancels out).
  const perCopy = (a: FanOut, b: FanOut) => (b.routerCpuPer100MBDelivered * b.deliveredBytes - a.routerCpuPer100MBDelivered * a.deliveredBytes) / (b.deliveredBytes - a.deliveredBytes);
  const ratio = many.routerCpuPer100MBDelivered / ten.routerCpuPer100MBDelivered;
  t.row('3 fan-out, router CPU per delivered byte, 32 observers', `${cpu(many)}; a copy from 10 to 32 ${f2(perCopy(ten, many))} s per 100 MB, from 1 to 10 ${f2(perCopy(one, ten))}`, cpu(ten).replace(' delivered', ' delivered, 10 observers'), ratio, `≤ ${T.thirtyTwoObserversCpuVsTen}× 10 observers'`, ratio <= T.thirtyTwoObserversCpuVsTen);
  for (const [n, f] of [[10, ten], [32, many]] as const) {
    const e = f.echo;
    t.row(`3 fan-out, ${n} observers, echo until all have it`, `p50 ${f2(e.lastObserver!.p50)} / p99 ${f2(e.lastObserver!.p99)} ms`, `any one observer p99 ${f2(e.observers!.p99)}, controller p99 ${f2(e.controller.p99)} ms`, null, '', null);
  }
}
