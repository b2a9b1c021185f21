// Every terminal this host starts (a native program, a multiplexer client) is started here.
//
// node-pty 1.1.0 forks with forkpty() and never marks the PTY master close-on-exec
// (microsoft/node-pty#657), so each child inherits the master of every terminal the host already
// runs: session 2's shell could read and type into session 1, and hold its terminal open after
// session 1 ended. Node has no fcntl to mark them from here, so the fix is on the child's side, as
// upstream's (node-pty #867, only in 1.2 betas): the program is exec'd through a few lines of Perl
// (perl-base is part of every Debian/Ubuntu system) that close every descriptor above 2 first.
// Where Perl is missing the host says so at start and terminals inherit (docs/security.md, item 5).

import { spawn as spawnPty, type IPty, type IPtyForkOptions } from 'node-pty';
import type { Logger } from '../../src/ports/logger.ts';
import { findProgram } from './find-program.ts';
import { run } from './exec.ts';
import { closingExecArgv } from './session-launch.ts';

export type SpawnTerminal = (file: string, args: string[], options: IPtyForkOptions & { env: Record<string, string> }) => IPty;

/**
 * Spawns directly, or through Perl closing the inherited descriptors when `perl` is given. The
 * Perl runs as the host's user with what the spawn was given: a session's variables arrive sealed
 * (session-launch.ts), so nothing of the session's environment steers it.
 */
export function terminalSpawner(perl: string | undefined): SpawnTerminal {
  if (perl === undefined) return (file, args, options) => spawnPty(file, args, options);
  // A session's own launch is already that Perl (session-launch.ts, launchArgv): one is enough.
  return (file, args, options) => spawnPty(perl, file === perl ? args : closingExecArgv(perl, file, args).slice(1), options);
}

/**
 * The Perl that closes inherited descriptors, where it is needed (Linux: node-pty's macOS path
 * uses posix_spawn with POSIX_SPAWN_CLOEXEC_DEFAULT) and can run; undefined otherwise (logged).
 */
export async function findFdCloser(log: Logger, searchPath: string): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  const perl = await findProgram('perl', `/usr/bin:/bin:${searchPath}`);
  if (perl && (await run(perl, ['-mPOSIX', '-e', '1'])).code === 0) return perl;
  log.log('warn', 'no usable perl: every terminal inherits the PTY masters of the sessions started before it (node-pty #657); install perl', { perl });
  return undefined;
}
