// Figures 2 and 10: keystroke echo against the bare one-process relay and ttyd in the same
// interleaved rounds, and one session's echo while another floods.
import type { EchoFigure } from '../figures/echo-rounds.ts';
import type { Isolation } from '../figures/isolation.ts';
import { f1, f2, pcts, type Table } from '../lib/rows.ts';
import { TARGETS as T } from '../targets.ts';

export function echoRows(t: Table, l: EchoFigure): void {
  const ttyd = 'skipped' in l.ttyd ? null : l.ttyd;
  t.row('2 echo, node-pty direct (the floor of a PTY)', pcts(l.nodePty), '', null, '', null);
  if (ttyd) t.row('2 echo, ttyd (C, one process)', pcts(ttyd), '', null, '', null);
  else t.row('2 echo, ttyd', `skipped: ${(l.ttyd as { skipped: string }).skipped}`, '', null, '', null);
  t.row('2 echo, bare one-process WS relay (PTY in the same process)', pcts(l.relay), '', null, '', null);
  for (const [mode, x] of [['binary', l.binary], ['JSON', l.json]] as const) {
    t.row(`2 echo, ${mode}`, pcts(x), '', null, '', null);
    for (const p of ['p50', 'p99'] as const) {
      t.row(`2 echo ${p}, ${mode} vs the bare relay`, `${f2(x[p])} ms`, `${f2(l.relay[p])} ms (relay)`, x[p] / l.relay[p], `≤ ${T.echoVsRelay}× the relay's`, x[p] <= T.echoVsRelay * l.relay[p]);
    }
    t.row(`2 echo p99, ${mode} vs ttyd`, `${f2(x.p99)} ms`, ttyd ? `${f2(ttyd.p99)} ms (ttyd)` : '', ttyd ? x.p99 / ttyd.p99 : null, `≤ ${T.echoP99VsTtyd}× ttyd's`, ttyd ? x.p99 <= T.echoP99VsTtyd * ttyd.p99 : 'no ttyd in this run');
  }
}

export function isolationRows(t: Table, i: Isolation): void {
  t.row('10 echo p99 of session B while session A floods', `${pcts(i.flooded)}; A at ${f1(i.floodMBps)} MB/s`, `${pcts(i.alone)} (B alone)`, i.flooded.p99 / i.alone.p99, `≤ ${T.floodedEchoP99}× B alone`, i.flooded.p99 <= T.floodedEchoP99 * i.alone.p99);
}
