// Figures 4, 6 and 11: replay to the Keyframe at each frame size; memory per idle session and per
// joiner that never reads.
import type { ReplayFigures } from '../figures/replay.ts';
import type { ScaleFigures } from '../figures/scale.ts';
import type { HeldByJoiners, StalledJoiners } from '../figures/stalled-joiners.ts';
import { f2, sp, type Table } from '../lib/rows.ts';
import { TARGETS as T } from '../targets.ts';

const MiB = 2 ** 20;
const mb = (b: number) => `${(b / MiB).toFixed(2)} MiB`;

export function replayRows(t: Table, r: ReplayFigures): void {
  const produced = r.producedFrameBytes === null ? 'interactive pace' : `written ${r.producedFrameBytes} B at a time`;
  t.row(`4 replay ${r.replayedFrames} frames of ~${r.frameBytes.toFixed(0)} B → Keyframe (${produced}, ${r.retained} retained)`, sp(r.replay1000, 'ms'), `${sp(r.joinWithoutReplay, 'ms')} (join, no replay)`, r.replay1000.median / r.joinWithoutReplay.median, `≤ ${T.replayMs} ms`, r.replay1000.median <= T.replayMs);
  t.row(`4  the same, the first replay (before the warm-up)`, `${r.firstReplayMs.toFixed(1)} ms`, '', null, '', null);
}

export function scaleRows(t: Table, s: ScaleFigures): void {
  t.row('6 RSS per idle session (router + host)', `${mb(s.perIdleSessionBytes)} (router ${mb(s.perIdleSessionRouterBytes)}, host ${mb(s.perIdleSessionHostBytes)})`, `${mb(s.rssBaseline.router)} router, ${mb(s.rssBaseline.host)} host at start`, null, `≤ ${T.idleSessionMiB} MiB`, s.perIdleSessionBytes <= T.idleSessionMiB * MiB);
  t.row('6 RSS per attached client (router)', mb(s.perClientBytes), '', null, '', null);
  t.row('6 create a session (REST)', sp(s.createMs, 'ms', f2), '', null, '', null);
  t.row('6 attach + join (first join spawns)', sp(s.attachMs, 'ms', f2), '', null, '', null);
}

function joinerRow(t: Table, what: string, h: HeldByJoiners): void {
  const base = `router heap + buffers ${mb(h.during)} with them, ${mb(h.after)} after; RSS ${mb(h.rss.during)} → ${mb(h.rss.after)}`;
  t.row(`11 router memory per joiner that never reads, ${what} (${h.joiners} joiners)`, mb(h.perJoiner), base, null, `≤ ${T.stalledJoinerMiB} MiB`, h.perJoiner <= T.stalledJoinerMiB * MiB);
}

export function stalledRows(t: Table, s: StalledJoiners): void {
  joinerRow(t, `live, during a ${(s.floodBytes / 1e6).toFixed(0)} MB flood`, s.live);
  joinerRow(t, 'asking for the whole log', s.replay);
}
