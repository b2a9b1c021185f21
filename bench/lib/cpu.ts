// CPU time by process and thread from /proc (Linux): what each part of the pipeline costs while a
// figure runs, and how busy the whole machine was — the profile that says what bounds a figure.
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime/stime (USER_HZ, 100 on Linux). */
const HZ = 100;

function threadSeconds(pid: number, tid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / HZ;
  } catch {
    return 0;
  }
}

/** Seconds of CPU of a process: its main thread, and all its other threads together. */
export function processCpu(pid: number | null | undefined): { main: number; threads: number } {
  if (!pid) return { main: NaN, threads: NaN };
  let threads = 0;
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) if (Number(t) !== pid) threads += threadSeconds(pid, Number(t));
  } catch {
    return { main: NaN, threads: NaN };
  }
  return { main: threadSeconds(pid, pid), threads };
}

/** Seconds the machine's CPUs were busy (all of them, every process and the kernel). */
export function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  const busy = ticks.slice(0, 8).reduce((a, b, i) => (i === 3 || i === 4 ? a : a + b), 0);
  return busy / HZ;
}
