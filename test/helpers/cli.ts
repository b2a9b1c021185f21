// Runs the real `pty-ws` binary as a child process, as a user would.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { until } from './wait.ts';

const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;

export interface CliRun {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function runCli(args: string[], home: string, env: Record<string, string> = {}): CliRun {
  let out = '';
  let err = '';
  // A native default session ends with its router (the tmux one: test/sessions/default-session.test.ts).
  const proc = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, HOME: home, SHELL: '/bin/sh', PTY_WS_DEFAULT_SESSION_BACKEND: 'native', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, stdout: () => out, stderr: () => err, exit };
}


/**
 * One temp HOME and at most one running child per test, both cleaned up after it. Call at the top
 * level of a test file; `run` starts the binary with that HOME.
 */
export function cliSandbox(prefix: string): { dir(): string; run(args: string[], env?: Record<string, string>): CliRun } {
  let child: ChildProcess | null = null;
  let dir = '';
  afterEach(() => {
    child?.kill('SIGKILL');
    child = null;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = '';
  });
  return {
    dir: () => (dir ||= mkdtempSync(join(tmpdir(), prefix))),
    run(args, env = {}) {
      const r = runCli(args, (dir ||= mkdtempSync(join(tmpdir(), prefix))), env);
      child = r.proc;
      return r;
    },
  };
}
export { until };
