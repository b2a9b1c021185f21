// A remote host's own policy (docs/remote-hosts.md, "The host's policy"): which programs it runs,
// whatever its router asks. The router is not trusted with this machine: a compromised one gets no
// more than what the policy allows.
//
// An argv pattern is words separated by blanks: an absolute program, then exact arguments, and
// optionally a last `*` meaning "any further arguments, or none". `/usr/bin/htop` allows exactly
// `["/usr/bin/htop"]`; `/bin/sh *` allows `/bin/sh` with anything (so any `command`, which the router
// runs as `/bin/sh -lc …`). No other wildcard, no quoting: an argument with a blank in it cannot be
// named, which errs on the side of refusing.
import type { SpawnSpec } from '../src/ports/pty-host.ts';
import { confinedEnvProblem } from '../src/core/session-confinement.ts';
import { isPlainAbsolutePath, parseArgvPattern, type ArgvPattern } from './wire/host-config.ts';
import { PtyHostError } from './wire/protocol.ts';

export function matchesPattern(pattern: ArgvPattern, argv: readonly string[]): boolean {
  if (argv.length < pattern.words.length || (!pattern.rest && argv.length !== pattern.words.length)) return false;
  return pattern.words.every((w, i) => argv[i] === w);
}

/** The default policy: the login shell, as a login shell or not, and nothing else. */
export function loginShellPatterns(shell: string): ArgvPattern[] {
  return [parseArgvPattern(shell), parseArgvPattern(`${shell} -l`)];
}

/** Shows a pattern as it was written. */
export function formatPattern(p: ArgvPattern): string {
  return [...p.words, ...(p.rest ? ['*'] : [])].join(' ');
}

/** The login shell of `/etc/passwd`'s entry (getent's line), else undefined. */
export function shellOfPasswdLine(line: string): string | undefined {
  const shell = line.trim().split(':')[6];
  return shell && shell.startsWith('/') ? shell : undefined;
}

export interface HostPolicy {
  /** This host's name: refusals say whose policy refused. */
  readonly host: string;
  readonly allowed: readonly ArgvPattern[];
  /** What a session that names no program runs here (the default policy's login shell), if the host says. */
  readonly defaultShell?: string;
}

/**
 * Throws PtyHostError `not_allowed` for a spawn the policy does not allow: an argv no pattern
 * matches, or a working directory that is not a plain absolute path (`..` could walk out of what
 * the sandbox hides); `bad_env` for variables the dynamic loader reads (they would run other code
 * inside an allowed program).
 */
export function checkSpawn(policy: HostPolicy, spec: SpawnSpec): void {
  if (!policy.allowed.some((p) => matchesPattern(p, spec.argv))) {
    throw new PtyHostError('not_allowed', `host ${policy.host} does not run ${JSON.stringify(spec.argv)}: its policy (--allow-command) does not allow it`);
  }
  const cwd = spec.cwd.replace(/(.)\/+$/, '$1');
  if (!isPlainAbsolutePath(cwd)) {
    throw new PtyHostError('not_allowed', `host ${policy.host} does not start sessions in ${JSON.stringify(spec.cwd)}: a working directory must be a plain absolute path`);
  }
  const envProblem = confinedEnvProblem(spec.env, `on host ${policy.host}, which runs only what its policy allows`);
  if (envProblem) throw new PtyHostError('bad_env', envProblem);
}
