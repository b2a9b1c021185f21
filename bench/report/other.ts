// Figures without a target: the echo path hop by hop, cold start, the nginx front door, A2A.
import type { A2AFigure } from '../figures/a2a.ts';
import type { ColdStart } from '../figures/cold-start.ts';
import type { FrontDoorAttach } from '../figures/front-door.ts';
import type { HopFigure } from '../figures/hop-trace.ts';
import { f2, pcts, sp, type Table } from '../lib/rows.ts';

export function hopTraceRows(t: Table, h: HopFigure): void {
  t.row('2t echo, binary, traced (total)', `p50 ${f2(h.total.p50)} / p90 ${f2(h.total.p90)} / p99 ${f2(h.total.p99)} ms`, h.unmatched ? `${h.unmatched} samples unmatched` : '', null, '', null);
  for (const s of h.segments) t.row(`2t  ${s.segment}`, `p50 ${f2(s.p50)} / p90 ${f2(s.p90)} / p99 ${f2(s.p99)} ms`, '', null, '', null);
}

export function coldStartRows(t: Table, c: ColdStart): void {
  const ms = (n: number) => n.toFixed(0);
  t.row('7 cold start, pty-ws serve (spawn → listening, PTY host included)', sp(c.serve.packed, 'ms', ms), `${sp(c.serve.sources, 'ms', ms)} (sources, tsx)`, c.serve.packed.median / c.serve.sources.median, '', null);
  t.row('7 cold start, PTY host (spawn → listening)', sp(c.ptyHost.packed, 'ms', ms), `${sp(c.ptyHost.sources, 'ms', ms)} (sources, tsx)`, c.ptyHost.packed.median / c.ptyHost.sources.median, '', null);
  t.row('7 npm pack + npm install --global of the tarball', `${(c.packMs / 1000).toFixed(1)} s + ${(c.installMs / 1000).toFixed(1)} s`, '', null, '', null);
}

export function frontDoorRows(t: Table, a: FrontDoorAttach): void {
  if ('skipped' in a) t.row('8 attach + join through the nginx front door', `skipped: ${a.skipped}`, '', null, '', null);
  else t.row('8 attach + join through the nginx front door', pcts(a.frontDoor), `${pcts(a.direct)} (direct)`, a.frontDoor.p50 / a.direct.p50, '', null);
}

export function a2aRows(t: Table, a: A2AFigure): void {
  for (const [transport, l] of Object.entries(a)) t.row(`9 A2A SendMessage \`echo hi\` into a session → COMPLETED, ${transport}`, pcts(l), `${l.samples} samples`, null, '', null);
}
