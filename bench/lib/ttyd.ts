// The competitor, ttyd (C, one process, libwebsockets + libuv), started on loopback as a child
// process so figures 1 and 2 measure it in the same run. How to run it and its
// WebSocket protocol: ../shared/bin/README.md (path /ws, subprotocol `tty`, a JSON size message
// first, then '0'+bytes both ways).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { BenchClient } from './client.ts';

const REPO = resolve(new URL('../..', import.meta.url).pathname);

export type TtydBinary = { path: string } | { missing: string };

/** The checkout that owns this one's git directory: a worktree's `../shared` is its main checkout's. */
function mainCheckout(): string | null {
  try {
    const common = execFileSync('git', ['-C', REPO, 'rev-parse', '--path-format=absolute', '--git-common-dir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirname(common);
  } catch {
    return null;
  }
}

/**
 * BENCH_TTYD when set (only it), else `<repo>/../shared/bin/ttyd`, else the same next to the main
 * checkout when this is a git worktree. A missing binary is not an error: its rows are skipped.
 */
export function findTtyd(env: NodeJS.ProcessEnv = process.env): TtydBinary {
  const tried = env.BENCH_TTYD ? [resolve(env.BENCH_TTYD)] : [...new Set([REPO, mainCheckout()].filter((d): d is string => d !== null).map((d) => join(d, '..', 'shared', 'bin', 'ttyd')))];
  for (const path of tried) {
    try {
      accessSync(path, constants.X_OK);
      return { path };
    } catch {
      // not there or not executable: try the next
    }
  }
  return { missing: tried.join(' or ') };
}

export interface Ttyd {
  process: ChildProcess;
  pid: number;
  /** A fresh client: ttyd spawns the command in a new PTY for every WebSocket. */
  connect(cols?: number, rows?: number): Promise<BenchClient>;
  stop(): Promise<void>;
}

/** Starts `ttyd` running `argv` for each connection; rejects (with its stderr) if it does not listen in 10 s. */
export async function startTtyd(binary: string, argv: string[]): Promise<Ttyd> {
  // -W: clients may type; -d 7 (its default: errors, warnings, notices) prints the port it bound.
  const child = spawn(binary, ['-i', '127.0.0.1', '-p', '0', '-W', '-d', '7', ...argv], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, HOME: process.env.HOME, SHELL: '/bin/sh' } });
  const port = await new Promise<number>((resolvePort, reject) => {
    let err = '';
    const timer = setTimeout(() => fail('did not listen in 10 s'), 10_000);
    function fail(why: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      const tail = err.trim().split('\n').slice(-3).join(' | ');
      reject(new Error(`ttyd ${why}${tail ? `: ${tail}` : ''}`));
    }
    child.once('error', (e) => fail(e.message));
    child.once('exit', (code) => fail(`exited (${code})`));
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /Listening on port: (\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        // Past the start its log is not read: drain it so a chatty ttyd never blocks on a full pipe.
        child.stderr!.removeAllListeners('data');
        child.stderr!.resume();
        resolvePort(Number(m[1]));
      }
    });
  });
  return {
    process: child,
    pid: child.pid!,
    connect: (cols = 120, rows = 30) => BenchClient.connectTtyd(`ws://127.0.0.1:${port}/ws`, cols, rows),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      // ttyd waits for its children on SIGTERM ("send ^C to force exit"): a lingering `sleep` would keep it.
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
