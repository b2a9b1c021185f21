// Order statistics for noisy measurements: report medians and spread, never a single run.

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export const median = (values: number[]): number => percentile(values, 50);

/** "median (min–max)" of repeated runs. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function spread(runs: number[]): Spread {
  return { median: median(runs), min: Math.min(...runs), max: Math.max(...runs), runs };
}
