// Checks made before forking: node-pty forks first and execs later, so a missing program or
// working directory would otherwise surface as a session that prints an error and exits 1.

import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SpawnSpec } from '../src/ports/pty-host.ts';
import { PtyHostError } from './wire/protocol.ts';

/** The largest size a kernel winsize (unsigned short) can hold. */
const MAX_DIMENSION = 0xffff;

/** Why a terminal size is unusable, or undefined when it is fine. */
export function sizeProblem(cols: number, rows: number): string | undefined {
  const ok = (n: number) => n >= 1 && n <= MAX_DIMENSION;
  return ok(cols) && ok(rows) ? undefined : `terminal size must be 1..${MAX_DIMENSION}, got ${cols}x${rows}`;
}

/** Validates the spec and returns the absolute path of the program to exec. Throws PtyHostError. */
export async function preflight(spec: SpawnSpec): Promise<string> {
  const badSize = sizeProblem(spec.cols, spec.rows);
  if (badSize) throw new PtyHostError('spawn_failed', badSize);
  await checkCwd(spec.cwd);
  return resolveProgram(spec);
}

async function checkCwd(cwd: string): Promise<void> {
  // The host's own cwd means nothing to the router, so a relative cwd is a bug upstream.
  if (!path.isAbsolute(cwd)) throw new PtyHostError('bad_cwd', `working directory must be absolute: ${cwd}`);
  const info = await stat(cwd).catch(() => undefined);
  if (!info) throw new PtyHostError('bad_cwd', `working directory does not exist: ${cwd}`);
  if (!info.isDirectory()) throw new PtyHostError('bad_cwd', `working directory is not a directory: ${cwd}`);
}

/**
 * Resolves argv[0] the way execvp would in the child: a name with a slash is taken relative
 * to the session's cwd, a bare name is searched on the session's PATH (the host's PATH when
 * the session has none). The resolved path is what gets exec'd, so the check cannot disagree
 * with the exec.
 */
async function resolveProgram(spec: SpawnSpec): Promise<string> {
  const program = spec.argv[0] ?? '';
  if (program === '') throw new PtyHostError('not_found', 'argv[0] is empty');
  if (program.includes('/')) {
    const file = path.resolve(spec.cwd, program);
    if (await isExecutableFile(file)) return file;
    throw new PtyHostError('not_found', `program not found or not executable: ${program}`);
  }
  const searchPath = spec.env.PATH ?? process.env.PATH ?? '';
  // Empty PATH entries mean "the cwd" to execvp; that is a classic foot-gun, so they are skipped.
  for (const dir of searchPath.split(':').filter((d) => d !== '')) {
    const file = path.resolve(spec.cwd, dir, program);
    if (await isExecutableFile(file)) return file;
  }
  throw new PtyHostError('not_found', `program not found on PATH: ${program}`);
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    const info = await stat(file);
    if (!info.isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
