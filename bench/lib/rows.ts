// The result table of `npm run bench`: one row per figure with its same-run baseline, the ratio,
// the target and a verdict (docs/performance.md says how to read it).
import type { Spread } from './stats.ts';

export interface Row {
  figure: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
  verdict: string;
}

export const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
export const f2 = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
export const sp = (s: Spread, unit: string, fmt = f1): string => `${fmt(s.median)} ${unit} (${fmt(s.min)}–${fmt(s.max)})`;
export const pcts = (x: { p50: number; p90: number; p99: number }): string => `p50 ${f2(x.p50)} / p90 ${f2(x.p90)} / p99 ${f2(x.p99)} ms`;

/**
 * `ok`: true / false for a target met or missed, `{ met, stretch }` for one with a stretch goal, a
 * string when the target could not be judged in this run (why: e.g. ttyd skipped), null for a row
 * without a target.
 */
export type Verdict = boolean | { met: boolean; stretch: boolean } | string | null;

function verdictText(ok: Verdict): string {
  if (ok === null) return '';
  if (typeof ok === 'string') return `not judged: ${ok}`;
  const met = typeof ok === 'boolean' ? ok : ok.met;
  if (!met) return 'MISSES target';
  return typeof ok === 'boolean' ? 'meets' : ok.stretch ? 'meets, stretch too' : 'meets, not the stretch';
}

export class Table {
  readonly rows: Row[] = [];

  row(figure: string, value: string, baseline: string, ratio: number | null, target: string, ok: Verdict): void {
    const r = { figure, value, baseline, ratio: ratio === null ? '' : `${f2(ratio)}×`, target, verdict: verdictText(ok) };
    this.rows.push(r);
    // Each figure as soon as it is known: a long run that fails later still leaves these.
    console.log(`  ${r.figure}: ${r.value}${r.baseline ? ` | baseline ${r.baseline}` : ''}${r.ratio ? ` | ${r.ratio}` : ''}${r.target ? ` | target ${r.target}` : ''}${r.verdict ? ` | ${r.verdict}` : ''}`);
  }

  print(): void {
    const cols: Array<keyof Row> = ['figure', 'value', 'baseline', 'ratio', 'target', 'verdict'];
    const width = (c: keyof Row) => Math.max(c.length, ...this.rows.map((r) => r[c].length));
    const line = (r: Record<keyof Row, string>) => cols.map((c) => r[c].padEnd(width(c))).join(' │ ');
    console.log(line({ figure: 'figure', value: 'value (median, min–max)', baseline: 'same-run baseline', ratio: 'ratio', target: 'target', verdict: '' }));
    console.log(cols.map((c) => '─'.repeat(width(c))).join('─┼─'));
    for (const r of this.rows) console.log(line(r));
  }

  /** Every row with a target, one line each with its verdict: what the next engineer looks at first. */
  printTargets(): void {
    const judged = this.rows.filter((r) => r.target);
    if (judged.length === 0) return console.log('\ntargets: none among the figures of this run');
    const width = Math.max(...judged.map((r) => r.verdict.length));
    console.log(`\ntargets: ${judged.filter((r) => r.verdict.startsWith('meets')).length} of ${judged.length} met`);
    for (const r of judged) console.log(`  ${r.verdict.padEnd(width)}  ${r.figure}: ${r.value}${r.ratio ? ` (${r.ratio})` : ''} — target ${r.target}`);
  }
}
