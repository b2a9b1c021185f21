// Ending a session means ending every process it started, not just its first one: a shell's
// jobs live in process groups of their own, and a program may ignore SIGHUP. A PTY makes its
// first process the leader of a kernel session, so "the session's processes" are the ones
// whose session id is that pid (read from /proc on Linux; elsewhere only the leader's group).

import { readFileSync, readdirSync } from 'node:fs';

/** How long processes get to honour the first signal before the survivors get SIGKILL. */
export const KILL_GRACE_MS = 2000;

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Pids of the processes whose kernel session is led by `leader` (the leader included while it lives). */
export function sessionMembers(leader: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat && stat.sid === leader && stat.state !== 'Z') members.push(Number(entry));
  }
  return members;
}

/**
 * Sends `signal` to the leader's process group and to every process of its kernel session; and
 * to the leader by its pid while it is a child of ours. A PTY's child makes its session only once
 * it runs: a kill sent before that (a session ended right after it started, on a busy machine)
 * found no group or session of that id, and the process ran on until the SIGKILL.
 */
export function signalSession(leader: number, signal: NodeJS.Signals | number): void {
  // 0 and 1 would mean our own process group and init: never a session of ours.
  if (!Number.isSafeInteger(leader) || leader <= 1) return;
  if (procStat(leader)?.ppid === process.pid) trySignal(leader, signal);
  trySignal(-leader, signal);
  for (const pid of sessionMembers(leader)) trySignal(pid, signal);
}

/**
 * Signals the session now and SIGKILLs whatever is left of it after KILL_GRACE_MS. The timer
 * does not keep the host alive.
 */
export function endSession(leader: number, signal: NodeJS.Signals | number): void {
  signalSession(leader, signal);
  setTimeout(() => signalSession(leader, 'SIGKILL'), KILL_GRACE_MS).unref();
}

/** The children of a process (Linux), oldest first. */
export function childrenOf(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text === '' ? [] : text.split(/\s+/).map(Number);
  } catch {
    return [];
  }
}

interface ProcStat {
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
}

export function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses: fields resume after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, ppid, pgid, sid] = fields;
  if (state === undefined || sid === undefined) return undefined;
  return { state, ppid: Number(ppid), pgid: Number(pgid), sid: Number(sid) };
}

function trySignal(pid: number, signal: NodeJS.Signals | number): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone, or never ours
  }
}
