// Finding what a test left running: processes tied to a temp dir, zombies, multiplexer servers.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { muxPaths } from '../../pty/backends/paths.ts';
import { run } from '../../pty/backends/exec.ts';
import { procStat } from '../../pty/backends/process-tree.ts';

function read(file: string): string {
  try {
    return readFileSync(file, 'latin1');
  } catch {
    return '';
  }
}

function pids(): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number);
}

/**
 * Live processes other than this one whose command line, working directory or environment
 * mention `marker` (a test's temp dir: the host's socket, the sessions' cwd, tmux's socket).
 */
export function processesMentioning(marker: string): string[] {
  const found: string[] = [];
  for (const pid of pids()) {
    if (pid === process.pid) continue;
    const stat = procStat(pid);
    if (!stat || stat.state === 'Z') continue;
    const cmd = read(`/proc/${pid}/cmdline`).replaceAll('\0', ' ').trim();
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      // gone, or not ours
    }
    if (cmd.includes(marker) || cwd.startsWith(marker) || read(`/proc/${pid}/environ`).includes(marker)) found.push(`${pid} ${cmd}`);
  }
  return found;
}

/** Zombie children of this process: children something forgot to reap. */
export function zombieChildren(): string[] {
  return pids().flatMap((pid) => {
    const stat = procStat(pid);
    if (stat?.state !== 'Z' || stat.ppid !== process.pid) return [];
    const comm = read(`/proc/${pid}/comm`).trim();
    // tsx's esbuild service of a router worker thread (the screen or log-commit worker, running
    // from sources): it exits when its worker ends, and only that worker's event loop, gone by
    // then, would have reaped it. Not the server's leftover; a packed install runs no tsx.
    return comm === 'esbuild' ? [] : [`${pid} ${comm}`];
  });
}

/** Ends the multiplexer servers of a PTY host socket: multiplexer sessions outlive hosts on purpose. */
export async function killMultiplexers(hostSocket: string): Promise<void> {
  const paths = muxPaths(hostSocket);
  await run('/usr/bin/env', ['tmux', '-S', paths.tmuxSocket, 'kill-server'], { PATH: process.env.PATH ?? '' });
  let sockets: string[] = [];
  try {
    sockets = readdirSync(paths.screenDir);
  } catch {
    // no screen session was ever made
  }
  for (const socket of sockets) await run('/usr/bin/env', ['screen', '-S', socket, '-X', 'quit'], { PATH: process.env.PATH ?? '', SCREENDIR: paths.screenDir });
}

/** Polls until nothing mentions `marker` any more, or fails naming what is left. */
export async function expectNoneLeft(marker: string, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = processesMentioning(marker);
    const zombies = zombieChildren();
    if (left.length === 0 && zombies.length === 0) return;
    if (Date.now() > deadline) throw new Error(`left running: ${JSON.stringify(left)}; zombies: ${JSON.stringify(zombies)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Ends what a test deliberately orphaned under `marker` (a PTY host outlives a SIGKILLed router by
 * design): SIGTERM, then SIGKILL for what is left, then nothing may remain.
 */
export async function endOrphans(marker: string): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    for (const line of processesMentioning(marker)) {
      try {
        process.kill(Number(line.split(' ')[0]), sig);
      } catch {
        // already gone
      }
    }
  };
  signal('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  signal('SIGKILL');
  await expectNoneLeft(marker);
}

/** endOrphans, but only when something under `marker` is still running (it costs a second otherwise). */
export async function endAnyOrphans(marker: string): Promise<void> {
  if (processesMentioning(marker).length > 0) await endOrphans(marker);
}
