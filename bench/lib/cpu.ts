// CPU time and disk writes by process and thread from /proc (Linux): what each part of the
// pipeline costs while a figure runs, and how busy the whole machine was — the profile that says
// what bounds a figure.
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime/stime (USER_HZ, 100 on Linux). */
const HZ = 100;

/**
 * Bytes a task caused to be written to a block device so far. The kernel counts a page of a file
 * when it first becomes dirty (`write_bytes`: a page written again before it reaches the disk
 * counts once, as the device sees it), and counts apart what was truncated while still dirty,
 * so never reached the disk (`cancelled_write_bytes`, to the task that truncated).
 */
export interface DiskWrites {
  dirtied: number;
  cancelled: number;
}

/** One thread at one moment: CPU seconds so far, its niceness, what it wrote to disk so far. */
export interface ThreadSample extends DiskWrites {
  tid: number;
  cpu: number;
  nice: number;
}

/** A process at one moment: each thread, and its own totals (which keep the threads that exited). */
export interface ProcessSample {
  pid: number;
  threads: ThreadSample[];
  /** /proc/<pid>/io: every thread's, exited ones included. */
  disk: DiskWrites;
}

function diskWrites(path: string): DiskWrites {
  try {
    const io = readFileSync(path, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(io)?.[1] ?? NaN);
    return { dirtied: field('write_bytes'), cancelled: field('cancelled_write_bytes') };
  } catch {
    return { dirtied: NaN, cancelled: NaN };
  }
}

function thread(pid: number, tid: number): ThreadSample | null {
  try {
    const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // After "(comm) ": state is field 0, utime 11, stime 12, nice 16.
    return { tid, cpu: (Number(fields[11]) + Number(fields[12])) / HZ, nice: Number(fields[16]), ...diskWrites(`/proc/${pid}/task/${tid}/io`) };
  } catch {
    return null;
  }
}

/** Every thread of `pid` now; null when the process is gone (or there is no /proc). */
export function sampleProcess(pid: number | null | undefined): ProcessSample | null {
  if (!pid) return null;
  try {
    const threads = readdirSync(`/proc/${pid}/task`).map((t) => thread(pid, Number(t))).filter((t): t is ThreadSample => t !== null);
    return { pid, threads, disk: diskWrites(`/proc/${pid}/io`) };
  } catch {
    return null;
  }
}

/** What each thread of a process spent between two samples (threads born in between count from 0). */
export function threadDeltas(a: ProcessSample, b: ProcessSample): ThreadSample[] {
  const before = new Map(a.threads.map((t) => [t.tid, t]));
  return b.threads.map((t) => {
    const p = before.get(t.tid);
    return { tid: t.tid, nice: t.nice, cpu: t.cpu - (p?.cpu ?? 0), dirtied: t.dirtied - (p?.dirtied ?? 0), cancelled: t.cancelled - (p?.cancelled ?? 0) };
  });
}

/** Seconds the machine's CPUs were busy (all of them, every process and the kernel). */
export function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  const busy = ticks.slice(0, 8).reduce((a, b, i) => (i === 3 || i === 4 ? a : a + b), 0);
  return busy / HZ;
}
