// How far a session's program is kept from the service that runs it (docs/security.md, item 2):
// the router's side. The PTY host applies it (pty/confine.ts); a router that starts a host hands
// it these settings as flags, and a router that finds a host already running checks that the
// host confines sessions as this router was told to, instead of silently running them unconfined.
import type { Config } from './config.ts';

export type SandboxMode = 'none' | 'bwrap';

/** What a PTY host says, in its greeting, about how it runs sessions. */
export interface ConfinementReport {
  /** The user sessions run as; null = the host's own user. */
  user: string | null;
  sandbox: SandboxMode;
}

type ConfinementConfig = Pick<Config, 'sessionUser' | 'sessionSandbox' | 'sessionHide' | 'stateDir' | 'ptySocket' | 'databaseUrl'>;

const dirOf = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';

/**
 * The directories no session may see: the state dir (database, dev token), the PTY host socket's
 * directory, a `file:` database's directory, and the operator's extra ones. `absolute` resolves
 * a path the way the runtime does (relative to the router's cwd).
 */
export function hiddenFromSessions(config: ConfinementConfig, absolute: (p: string) => string): string[] {
  const dirs = [absolute(config.stateDir), dirOf(absolute(config.ptySocket))];
  if (config.databaseUrl.startsWith('file:')) dirs.push(dirOf(absolute(config.databaseUrl.slice('file:'.length))));
  dirs.push(...(config.sessionHide ?? []));
  return [...new Set(dirs)];
}

/** Flags for a PTY host this router starts, so that it confines sessions as configured. */
export function confinementFlags(config: ConfinementConfig, absolute: (p: string) => string): string[] {
  if (!config.sessionUser && config.sessionSandbox === 'none') return [];
  const flags = ['--session-sandbox', config.sessionSandbox, '--session-hide', hiddenFromSessions(config, absolute).join(':')];
  if (config.sessionUser) flags.push('--session-user', config.sessionUser);
  return flags;
}

/**
 * A host already listening was started by someone else: it must run sessions as this router's
 * settings say, or the router refuses to use it (an operator who asked for confinement must
 * never get unconfined sessions without a word). Returns the problem, or null.
 */
export function confinementMismatch(config: ConfinementConfig, reported: ConfinementReport | undefined): string | null {
  const want: ConfinementReport = { user: config.sessionUser ?? null, sandbox: config.sessionSandbox };
  const got: ConfinementReport = reported ?? { user: null, sandbox: 'none' };
  if (want.user === got.user && want.sandbox === got.sandbox) return null;
  const say = (c: ConfinementReport) => `user ${c.user ?? "(the host's own)"}, sandbox ${c.sandbox}`;
  return `the PTY host runs sessions with ${say(got)}, but this router is configured for ${say(want)} (PTY_WS_SESSION_USER, PTY_WS_SESSION_SANDBOX): stop that host or start it with the same settings`;
}
