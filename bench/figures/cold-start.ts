// Figure 7: cold start, from spawning the process to its listening line: `pty-ws serve` (which
// starts its PTY host before it listens) and the PTY host alone, each from the sources through tsx
// (a clone's `npm start`) against the compiled package installed from `npm pack` (README "Install").
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packAndInstall } from '../../scripts/packed-install.ts';
import { spread, type Spread } from '../lib/stats.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ColdStart {
  serve: { sources: Spread; packed: Spread };
  ptyHost: { sources: Spread; packed: Spread };
  packMs: number;
  installMs: number;
}

interface Start {
  file: string;
  args: string[];
  cwd: string;
}

export async function coldStart(runs: number): Promise<ColdStart> {
  const pkg = await packAndInstall();
  try {
    const serve = (s: Start) => (dir: string) => ({ ...s, args: [...s.args, 'serve', '--port', '0', '--state-dir', dir] });
    const host = (s: Start) => (dir: string) => ({ ...s, args: [...s.args, '--socket', join(dir, 'host.sock')] });
    const node = process.execPath;
    const figures = {
      serveSources: serve({ file: node, args: [join(ROOT, 'bin/pty-ws.js')], cwd: ROOT }),
      servePacked: serve({ file: pkg.bin, args: [], cwd: pkg.dir }),
      // The host as the router starts it (src/adapter/node/package-files.ts).
      hostSources: host({ file: node, args: ['--import', 'tsx', join(ROOT, 'src/adapter/node/pty-host-main.ts')], cwd: ROOT }),
      hostPacked: host({ file: node, args: [join(pkg.packageDir, 'dist/pty-host.js')], cwd: pkg.dir }),
    };
    const times: Record<keyof typeof figures, number[]> = { serveSources: [], servePacked: [], hostSources: [], hostPacked: [] };
    // Interleaved, so a busy moment of the machine falls on both sides alike.
    for (let i = 0; i < runs; i++) {
      times.serveSources.push(await timeToListening(figures.serveSources, 'pty-ws listening on '));
      times.servePacked.push(await timeToListening(figures.servePacked, 'pty-ws listening on '));
      times.hostSources.push(await timeToListening(figures.hostSources, 'pty-host listening '));
      times.hostPacked.push(await timeToListening(figures.hostPacked, 'pty-host listening '));
    }
    return {
      serve: { sources: spread(times.serveSources), packed: spread(times.servePacked) },
      ptyHost: { sources: spread(times.hostSources), packed: spread(times.hostPacked) },
      packMs: pkg.packMs,
      installMs: pkg.installMs,
    };
  } finally {
    pkg.remove();
  }
}

/** Milliseconds from spawn to the line starting with `line` on stdout; then SIGTERM and its exit. */
async function timeToListening(start: (dir: string) => Start, line: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-bench-cold-'));
  const { file, args, cwd } = start(dir);
  const t0 = performance.now();
  const child = spawn(file, args, { cwd, env: { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    return await new Promise<number>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.split('\n').some((l) => l.startsWith(line))) resolve(performance.now() - t0);
      });
      child.once('exit', (code) => reject(new Error(`${file} ${args.join(' ')} exited (${code}) before listening: ${err}`)));
      setTimeout(() => reject(new Error(`${file} ${args.join(' ')}: not listening after 60 s: ${err}`)), 60_000).unref();
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
    await stopStrayHosts(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A `serve` stopped right after its listening line sometimes leaves its PTY host running (5 of 18
 * runs; the host is a detached process so sessions outlive a router restart): any process whose
 * command line names this run's own temp dir is ended, so the figure leaves nothing behind.
 */
async function stopStrayHosts(dir: string): Promise<void> {
  const strays = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
  for (const pid of strays) process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 5000;
  const alive = (pid: number) => {
    try {
      return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return false;
    }
  };
  while (strays.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const pid of strays.filter(alive)) process.kill(pid, 'SIGKILL');
}
