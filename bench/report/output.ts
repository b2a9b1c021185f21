// Figures 1 and 5: output rate, CPU and disk writes per output byte, against ttyd in the same run.
import type { ThroughputFigures } from '../figures/throughput.ts';
import { f1, f2, sp, type Table } from '../lib/rows.ts';
import { TARGETS as T } from '../targets.ts';

const NO_TTYD = 'no ttyd in this run';
/** A figure /proc could not give (a process gone, no /proc) is not judged. */
const judged = (x: number, ok: boolean) => (Number.isFinite(x) ? ok : 'not readable from /proc in this run');

export function outputRows(t: Table, f: ThroughputFigures): void {
  const ttyd = 'skipped' in f.ttyd ? null : f.ttyd;
  const ttydRate = ttyd ? sp(ttyd.mbps, 'MB/s (ttyd)') : '';
  const vsTtyd = (x: number) => (ttyd ? x / ttyd.mbps.median : null);
  t.row('1 output, node-pty direct (the floor of reading a PTY)', sp(f.nodePty, 'MB/s'), '', null, '', null);
  if (ttyd) t.row('1 output, ttyd (C, one process)', `${sp(ttyd.mbps, 'MB/s')}${ttyd.verified ? '' : ', bytes NOT verified'}`, sp(f.nodePty, 'MB/s (node-pty)'), ttyd.mbps.median / f.nodePty.median, '', null);
  else t.row('1 output, ttyd', `skipped: ${(f.ttyd as { skipped: string }).skipped}`, '', null, '', null);
  t.row('1 output, bare one-process WS relay (the floor of a Node design)', sp(f.relay.mbps, 'MB/s'), ttydRate, vsTtyd(f.relay.mbps.median), '', null);
  const bin = vsTtyd(f.binary.median);
  t.row('1 output, binary (PW1O)', sp(f.binary, 'MB/s'), ttydRate, bin, `≥ ${T.binaryVsTtyd}× ttyd (stretch ${T.binaryVsTtydStretch}×)`, bin === null ? NO_TTYD : { met: bin >= T.binaryVsTtyd, stretch: bin >= T.binaryVsTtydStretch });
  const json = vsTtyd(f.json.median);
  t.row('1 output, JSON/base64', sp(f.json, 'MB/s'), ttydRate, json, `≥ ${T.jsonVsTtyd}× ttyd`, json === null ? NO_TTYD : json >= T.jsonVsTtyd);
  t.row('1 output, binary, keyframe cadence off', sp(f.binaryNoCadence, 'MB/s'), sp(f.binary, 'MB/s (cadence on)'), f.binaryNoCadence.median / f.binary.median, '', null);
  t.row('1 bytes verified (sha256, every run)', f.allVerified ? 'yes' : 'NO: the rates above are not of the whole payload', '', null, '', null);

  const c = f.cost.binary.cpu;
  const cpuRatio = ttyd ? c.server / ttyd.cpuPer100MB.median : null;
  t.row('1 server CPU s per 100 MB, binary (router + PTY host, every thread)', `${f2(c.server)} s`, ttyd ? `${sp(ttyd.cpuPer100MB, 's', f2)} (ttyd, its process)` : '', cpuRatio, `≤ ${T.serverCpuVsTtyd}× ttyd's`, cpuRatio === null ? NO_TTYD : judged(cpuRatio, cpuRatio <= T.serverCpuVsTtyd));
  t.row('1  by thread', `router main ${f2(c.routerMain)}, log-commit worker ${f2(c.logWorker)}, screen worker ${f2(c.screenWorker)}, router other threads ${f2(c.routerOther)}, PTY host main ${f2(c.hostMain)}, PTY host threads ${f2(c.hostThreads)}`, `client ${f2(c.client)}, rest of the machine ${f2(c.rest)}; cores ${(c.machineBusy * 100).toFixed(0)} % busy`, null, '', null);
  t.row('1  server CPU s per 100 MB, other streams', `JSON ${f2(f.cost.json.cpu.server)}, binary with keyframe cadence off ${f2(f.cost.binaryNoCadence.cpu.server)}`, `${sp(f.relay.cpuPer100MB, 's', f2)} (bare relay, its process)`, null, '', null);

  const d = f.cost.binary.disk;
  t.row('1 disk bytes written per output byte, binary (router + PTY host)', f2(d.server), ttyd ? `${f2(ttyd.diskPerByte.median)} (ttyd)` : '', null, `≤ ${T.diskPerByte}`, judged(d.server, d.server <= T.diskPerByte));
  t.row('1  pages dirtied per output byte, by thread', `journal (router main) ${f2(d.routerMain)}, WAL + checkpoints (log-commit worker) ${f2(d.logWorker)}, router other threads ${f2(d.routerOther)}, PTY host ${f2(d.host)}; ${f2(d.cancelled)} of the ${f2(d.dirtied)} truncated before writeback`, `written JSON ${f2(f.cost.json.disk.server)}, cadence off ${f2(f.cost.binaryNoCadence.disk.server)}`, null, '', null);

  t.row('5 log rows committed', sp(f.rowsPerSec, 'rows/s', (n) => n.toFixed(0)), '', null, '', null);
  t.row('5 log bytes committed', sp(f.logMBps, 'MB/s', f1), '', null, '', null);
  t.row('5 durability delay after last byte', sp(f.durabilityDelayMs, 'ms'), '', null, '', null);
}
