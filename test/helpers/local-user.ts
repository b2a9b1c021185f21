// A second local user, for the attacks other users of the machine can make (docs/security.md).
// Creating one needs root: tests that need it skip with that reason otherwise (CI runs as root).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

export const IS_ROOT = process.getuid?.() === 0;
export const NEEDS_ROOT = 'needs root to create a second local user (useradd) and act as it (runuser)';

export interface LocalUser {
  name: string;
  uid: number;
  gid: number;
  /** Runs argv as this user and waits: status and output. */
  run(argv: string[]): { status: number | null; stdout: string; stderr: string };
  /** Starts argv as this user (stdio piped): the child is the program itself, so killing it kills the program. */
  start(argv: string[]): ChildProcess;
}

/** The user `name` (a system user without a home or a login shell), created when missing. */
export function localUser(name = 'ptyws-other'): LocalUser {
  if (!IS_ROOT) throw new Error(NEEDS_ROOT);
  if (spawnSync('id', ['-u', name]).status !== 0) {
    const made = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name], { encoding: 'utf8' });
    // A test file running in parallel may have created it meanwhile.
    if (made.status !== 0 && spawnSync('id', ['-u', name]).status !== 0) throw new Error(`useradd ${name}: ${made.stderr}`);
  }
  const id = (flag: string) => Number(spawnSync('id', [flag, name], { encoding: 'utf8' }).stdout.trim());
  const asUser = (argv: string[]) => ['-u', name, '--', ...argv];
  return {
    name,
    uid: id('-u'),
    gid: id('-g'),
    run: (argv) => {
      const r = spawnSync('runuser', asUser(argv), { encoding: 'utf8', timeout: 10_000 });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    // setpriv execs the program as the user; runuser forks it and waits, so a killed runuser left
    // the program running after the test (an orphaned listener per test, found by `ps`).
    start: (argv) => spawn('setpriv', [`--reuid=${id('-u')}`, `--regid=${id('-g')}`, '--init-groups', '--', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] }),
  };
}
