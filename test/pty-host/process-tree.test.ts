// Ending a session's processes (pty/backends/process-tree.ts) against real processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { procStat, signalSession } from '../../pty/backends/process-tree.ts';

const started: ChildProcess[] = [];

afterEach(() => {
  for (const c of started.splice(0)) c.kill('SIGKILL');
});

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('signalSession', () => {
  it('reaches a leader that has not made its own session yet (a PTY child just forked)', async () => {
    // A PTY's child calls setsid() only once it runs: a kill sent between the fork and that call
    // finds neither a process group nor a kernel session of that id. A child of ours stands in
    // for it: same session and group as this process, so only its pid names it.
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    started.push(child);
    const pid = child.pid!;
    const stat = procStat(pid);
    expect(stat?.sid).not.toBe(pid);
    expect(stat?.pgid).not.toBe(pid);
    signalSession(pid, 'SIGTERM');
    const exit = await Promise.race([exitOf(child), new Promise((r) => setTimeout(() => r('still running'), 3000))]);
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('reaches every process of a session led by a pid, in other process groups too', async () => {
    // `setsid` makes the shell a session leader; its background job puts itself in a process
    // group of its own (as a shell with job control does), staying in the session.
    const job = 'import os; os.setpgid(0, 0); os.execvp("sleep", ["sleep", "30"])';
    const leader = spawn('setsid', ['-w', 'sh', '-c', `python3 -c '${job}' & echo $!; wait`], { stdio: ['ignore', 'pipe', 'ignore'] });
    started.push(leader);
    const jobPid = Number(await new Promise<string>((resolve) => leader.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()))));
    const shellPid = procStat(jobPid)!.sid;
    for (const deadline = Date.now() + 5000; procStat(jobPid)?.pgid !== jobPid && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
    expect(procStat(jobPid)).toMatchObject({ pgid: jobPid, sid: shellPid });
    expect(shellPid).toBe(leader.pid);
    signalSession(shellPid, 'SIGTERM');
    const deadline = Date.now() + 3000;
    while (procStat(jobPid) && procStat(jobPid)!.state !== 'Z' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(procStat(jobPid) === undefined || procStat(jobPid)!.state === 'Z').toBe(true);
    await exitOf(leader);
  });

  it('leaves pids 0 and 1 alone', () => {
    expect(() => signalSession(0, 0)).not.toThrow();
    expect(() => signalSession(1, 0)).not.toThrow();
  });
});
