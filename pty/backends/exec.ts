// Running a multiplexer command: never through a shell, with an explicit environment, bounded in time.

import { execFile } from 'node:child_process';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const RUN_TIMEOUT_MS = 10_000;

/** Runs `file` (an absolute path) and resolves with its status and output; never rejects. */
export function run(file: string, args: readonly string[], env: Record<string, string> = {}, cwd = '/'): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(file, args, { env, cwd, timeout: RUN_TIMEOUT_MS, encoding: 'utf8', maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr: stderr || (err && code === null ? err.message : '') });
    });
  });
}

/** Quotes one word for /bin/sh. */
export function shQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}
