// Runs the real `pty-ws` binary as a child process, as a user would.
import { spawn, type ChildProcess } from 'node:child_process';

const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;

export interface CliRun {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

export function runCli(args: string[], home: string, env: Record<string, string> = {}): CliRun {
  let out = '';
  let err = '';
  const proc = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, HOME: home, SHELL: '/bin/sh', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, stdout: () => out, stderr: () => err, exit };
}

export async function until<T>(f: () => T | undefined | null | Promise<T | undefined | null>, what: string, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
