// How far a session's program is kept from the service that runs it (docs/security.md, item 2):
// the router's side. The PTY host applies it (pty/confine.ts); a router that starts a host hands
// it these settings as flags, and a router that finds a host already running checks that the
// host confines sessions as this router was told to, instead of silently running them unconfined.
import type { Config } from './config.ts';

export type SandboxMode = 'none' | 'bwrap';
/** The sandbox's network: the machine's (`host`), or a namespace of its own with loopback only (`none`). */
export type SessionNetwork = 'host' | 'none';

/** What a PTY host says, in its greeting, about how it runs sessions. */
export interface ConfinementReport {
  /** The user sessions run as; null = the host's own user. */
  user: string | null;
  sandbox: SandboxMode;
  /** Absent from hosts that predate it: `host`. */
  network?: SessionNetwork;
}

type ConfinementConfig = Pick<
  Config,
  | 'sessionUser'
  | 'sessionSandbox'
  | 'sessionNetwork'
  | 'sessionHide'
  | 'stateDir'
  | 'ptySocket'
  | 'databaseUrl'
  | 'jwtSecretFile'
  | 'databaseAuthTokenFile'
  | 'tokensFile'
  | 'tlsCert'
  | 'tlsKey'
  | 'tlsClientCa'
>;

/**
 * Variables the dynamic loader and libc read as paths to code or as allocator and resolver
 * settings (glibc's list of variables it drops for set-user-ID programs). A confined session may
 * not set them: its variables reach only its own program (pty/backends/session-launch.ts), and
 * refusing these as well means that a mistake there still hands nothing to a program of root.
 * TMPDIR, also on glibc's list, is a session's everyday setting and only names a directory.
 */
const LOADER_VARIABLES = /^(LD_.*|MALLOC_.*|GCONV_PATH|GETCONF_DIR|GLIBC_TUNABLES|HOSTALIASES|LOCALDOMAIN|LOCPATH|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS|TZDIR)$/;

/** Why a confined session (or one of a host with a policy: `when`) may not have this environment, or undefined when it may. */
export function confinedEnvProblem(env: Record<string, string>, when = 'while sessions are confined'): string | undefined {
  const refused = Object.keys(env).filter((name) => LOADER_VARIABLES.test(name));
  if (refused.length === 0) return undefined;
  return `environment variable${refused.length > 1 ? 's' : ''} ${refused.join(', ')} may not be set ${when}: the dynamic loader and libc read them (docs/security.md)`;
}

const dirOf = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';

/**
 * The paths no session may see: the state dir (database, dev token), the PTY host socket's
 * directory, a `file:` database's directory, every file the service reads a secret or a key from
 * (the token map, JWT secret, database token, TLS files), and the operator's extra ones.
 * `absolute` resolves a path the way the runtime does (relative to the router's cwd).
 */
export function hiddenFromSessions(config: ConfinementConfig, absolute: (p: string) => string): string[] {
  const paths = [absolute(config.stateDir), dirOf(absolute(config.ptySocket))];
  if (config.databaseUrl.startsWith('file:')) paths.push(dirOf(absolute(config.databaseUrl.slice('file:'.length))));
  for (const file of [config.tokensFile, config.jwtSecretFile, config.databaseAuthTokenFile, config.tlsCert, config.tlsKey, config.tlsClientCa]) {
    if (file) paths.push(absolute(file));
  }
  paths.push(...(config.sessionHide ?? []));
  return [...new Set(paths)];
}

/** How a PTY host confines the sessions it starts (pty/confine.ts applies it). */
export interface SessionConfinement {
  /** The user sessions run as; undefined = the host's own. */
  user: string | undefined;
  sandbox: SandboxMode;
  network: SessionNetwork;
  /** Absolute paths no session may see (with the sandbox). */
  hide: readonly string[];
}

/** This router's confinement, for a PTY host it starts: its settings and every path hidden from sessions. */
export function sessionConfinement(config: ConfinementConfig, absolute: (p: string) => string): SessionConfinement {
  return { user: config.sessionUser, sandbox: config.sessionSandbox, network: config.sessionNetwork, hide: hiddenFromSessions(config, absolute) };
}

/**
 * A host already listening was started by someone else: it must run sessions as this router's
 * settings say, or the router refuses to use it (an operator who asked for confinement must
 * never get unconfined sessions without a word). Returns the problem, or null.
 */
export function confinementMismatch(config: ConfinementConfig, reported: ConfinementReport | undefined): string | null {
  const want = { user: config.sessionUser ?? null, sandbox: config.sessionSandbox, network: effectiveNetwork(config.sessionSandbox, config.sessionNetwork) };
  const got = { user: reported?.user ?? null, sandbox: reported?.sandbox ?? 'none', network: reported?.network ?? 'host' };
  if (want.user === got.user && want.sandbox === got.sandbox && want.network === got.network) return null;
  const say = (c: typeof want) => `user ${c.user ?? "(the host's own)"}, sandbox ${c.sandbox}${c.sandbox === 'bwrap' ? `, network ${c.network}` : ''}`;
  return `the PTY host runs sessions with ${say(got)}, but this router is configured for ${say(want)} (PTY_WS_SESSION_USER, PTY_WS_SESSION_SANDBOX, PTY_WS_SESSION_NETWORK): stop that host or start it with the same settings`;
}

/** The network only a sandbox can take away: without one, sessions have the machine's. */
export function effectiveNetwork(sandbox: SandboxMode, network: SessionNetwork): SessionNetwork {
  return sandbox === 'bwrap' ? network : 'host';
}
