// Which backends this host can run: native always; a multiplexer when its binary is on PATH
// (and, for tmux, new enough) and its private directory can be set up.

import type { Logger } from '../../src/ports/logger.ts';
import type { Backend } from './backend.ts';
import { run } from './exec.ts';
import { findProgram } from './find-program.ts';
import { NativeBackend } from './native.ts';
import { muxPaths } from './paths.ts';
import { ScreenBackend } from './screen.ts';
import { terminalSpawner } from './terminal-spawn.ts';
import { TmuxBackend } from './tmux.ts';

/** `new-session -e` and `terminal-features` need tmux 3.2 (versions as major * 100 + minor). */
const MIN_TMUX = 302;

/** `fdCloser`: the Perl every terminal is started through (findFdCloser), if there is one. */
export async function detectBackends(hostSocket: string, log: Logger, fdCloser: string | undefined, searchPath = process.env.PATH ?? ''): Promise<Backend[]> {
  const spawn = terminalSpawner(fdCloser);
  const backends: Backend[] = [new NativeBackend(spawn)];
  const paths = muxPaths(hostSocket);

  const tmux = await findProgram('tmux', searchPath);
  if (tmux) {
    const version = parseTmuxVersion((await run(tmux, ['-V'])).stdout);
    if (version < MIN_TMUX) log.log('warn', 'tmux is too old for the tmux backend', { tmux, version, need: MIN_TMUX });
    else addBackend(backends, log, 'tmux', () => new TmuxBackend(tmux, paths, version, spawn, fdCloser));
  }
  const screen = await findProgram('screen', searchPath);
  if (screen) addBackend(backends, log, 'screen', () => new ScreenBackend(screen, paths, spawn));
  const zellij = await findProgram('zellij', searchPath);
  if (zellij) log.log('info', 'zellij is installed but this host has no zellij backend; not offered', { zellij });

  log.log('info', 'backends', { backends: backends.map((b) => b.name), muxDir: paths.dir });
  return backends;
}

function addBackend(backends: Backend[], log: Logger, name: string, make: () => Backend): void {
  try {
    backends.push(make());
  } catch (err) {
    log.log('warn', `${name} backend unavailable`, { err });
  }
}

/** "tmux 3.3a" → 303, "tmux next-3.4" → 304; unreadable → 0. */
export function parseTmuxVersion(text: string): number {
  const m = /(\d+)\.(\d+)/.exec(text);
  return m ? Number(m[1]) * 100 + Number(m[2]) : 0;
}
