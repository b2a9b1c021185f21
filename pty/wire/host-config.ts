// The PTY host's own settings (docs/configuration.md, `pty-ws pty-host`): read once, from its
// flags and environment, when the host process starts, and passed down. Not the router's Config:
// the host reads only what it uses, so a router setting can neither stop it nor reach it. A
// router that starts a host tells it these same settings as flags (ptyHostArgs), written here
// next to the reader so the two cannot drift apart.
import * as v from 'valibot';
import { ConfigError, loadSettings, parseArgs, sessionBaseEnv } from '../../src/core/config.ts';
import { HOST_TOKEN_PREFIX, HostName } from '../../src/protocol/host-info.ts';
import type { LogLevel } from '../../src/ports/logger.ts';
import type { SessionConfinement } from '../../src/core/session-confinement.ts';

type Env = Readonly<Record<string, string | undefined>>;

export interface PtyHostConfig {
  /** The Unix socket it listens on (absolute). */
  socketPath: string;
  /**
   * The state directory of the router that started it (`--started-by`), which says so in its
   * greeting: routers on that state dir may stop it (src/host-link/launcher.ts). Undefined when
   * started on its own.
   */
  startedBy: string | undefined;
  logLevel: LogLevel;
  confinement: SessionConfinement;
  /** Where it looks for the multiplexers and Perl: the PATH sessions start with. */
  path: string;
  /** Its own $HOME: a confined session user's home (pty/confine.ts). */
  home: string | undefined;
  /** `--connect`: the router it dials in to instead of listening on its socket (docs/remote-hosts.md). */
  remote?: RemoteLink;
}

/** A remote host's link: the router's link route, as which host, with which credential. */
export interface RemoteLink {
  url: string;
  name: string;
  /** The credential, read from its file at each dial (a new one is picked up without a restart). */
  token(): string;
  /** `--allow-command`, each one: undefined = the session user's login shell only (pty/host-policy.ts). */
  allowCommands: ArgvPattern[] | undefined;
  /** `--backends`: the backends it offers, of those found here; undefined = all of them. */
  backends: string[] | undefined;
}

/** The flags only a host that dials in takes: its own policy (docs/remote-hosts.md). */
const POLICY_FLAGS = ['allow-command', 'backends'] as const;

/** What a router tells a host it starts; the host reads the rest from its own environment. */
export type PtyHostLaunch = Pick<PtyHostConfig, 'socketPath' | 'startedBy' | 'logLevel' | 'confinement'>;

/** The settings of src/core/config.ts a host reads (besides `--socket` and `--started-by`). */
const HOST_SETTINGS = ['stateDir', 'ptySocket', 'logLevel', 'sessionUser', 'sessionSandbox', 'sessionNetwork', 'sessionHide', 'instanceId'] as const;

/**
 * The host's settings from its arguments (after the command, if any) and environment: `--socket`
 * (short for `--pty-socket`), `--started-by`, and the HOST_SETTINGS flags. `absolute` resolves a
 * path as the runtime does. Throws ConfigError naming each bad or unknown one.
 */
export function readPtyHostConfig(argv: readonly string[], env: Env, absolute: (p: string) => string, readText: (file: string) => string = unreadable): PtyHostConfig {
  const { rest, allowed } = takeRepeated(argv, 'allow-command');
  const { socket, 'started-by': startedBy, connect, name, 'token-file': tokenFile, backends, sandbox, ...flags } = parseArgs(rest).flags;
  // `--sandbox` is the remote host's short name for `--session-sandbox`.
  if (sandbox !== undefined) flags['session-sandbox'] = sandbox;
  const s = loadSettings(HOST_SETTINGS, env, socket === undefined ? flags : { ...flags, 'pty-socket': socket });
  const dialsIn = connect !== undefined || name !== undefined || tokenFile !== undefined;
  if (!dialsIn && (allowed.length > 0 || backends !== undefined)) {
    throw new ConfigError([`${POLICY_FLAGS.map((f) => `--${f}`).join(' and ')} are a remote host's policy: they go with --connect (a host a router starts runs what that router asks)`]);
  }
  return {
    ...(dialsIn ? { remote: { ...remoteLink(connect, name, tokenFile, s.instanceId, readText), ...hostPolicy(allowed, backends) } } : {}),
    socketPath: absolute(s.ptySocket),
    startedBy,
    logLevel: s.logLevel,
    confinement: { user: s.sessionUser, sandbox: s.sessionSandbox, network: s.sessionNetwork, hide: s.sessionHide ?? [] },
    path: sessionBaseEnv(env).PATH!,
    home: env.HOME,
  };
}

/** Every value of a repeatable flag (`--name value` or `--name=value`), and the arguments without them. */
function takeRepeated(argv: readonly string[], flag: string): { rest: string[]; allowed: string[] } {
  const rest: string[] = [];
  const allowed: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith(`--${flag}=`)) allowed.push(a.slice(flag.length + 3));
    else if (a !== `--${flag}`) rest.push(a);
    else if (i + 1 < argv.length) allowed.push(argv[++i]!);
    else throw new ConfigError([`--${flag}: expected a value`]);
  }
  return { rest, allowed };
}

/** `--allow-command` (each an argv pattern) and `--backends` (a comma-separated list). */
function hostPolicy(allowed: readonly string[], backends: string | undefined): Pick<RemoteLink, 'allowCommands' | 'backends'> {
  const problems: string[] = [];
  const allowCommands = allowed.flatMap((text) => {
    try {
      return [parseArgvPattern(text)];
    } catch (e) {
      problems.push((e as Error).message);
      return [];
    }
  });
  const offered = backends?.split(',').map((b) => b.trim()).filter(Boolean);
  if (offered?.length === 0) problems.push('--backends: expected a comma-separated list of backends (native, tmux, screen)');
  if (problems.length > 0) throw new ConfigError(problems);
  return { allowCommands: allowed.length > 0 ? allowCommands : undefined, backends: offered };
}

/** Where no reader of files was given: a credential file cannot be read. */
function unreadable(file: string): string {
  throw new Error(`--token-file ${file}: this runtime reads no files here`);
}

/** `--connect URL --name NAME --token-file FILE`, all three: a remote host's link (docs/remote-hosts.md). */
function remoteLink(connect: string | undefined, name: string | undefined, tokenFile: string | undefined, instanceId: string, readText: (file: string) => string): Omit<RemoteLink, 'allowCommands' | 'backends'> {
  if (connect === undefined || name === undefined || tokenFile === undefined) throw new ConfigError(["--connect, --name and --token-file go together: the router, this host's name there, and the file holding its host credential"]);
  const named = v.safeParse(HostName, name);
  if (!named.success) throw new ConfigError([`--name ${JSON.stringify(name)}: ${named.issues[0].message}`]);
  const token = (): string => {
    const text = readText(tokenFile).trim();
    if (!text.startsWith(HOST_TOKEN_PREFIX)) throw new Error(`--token-file ${tokenFile}: not a host credential (pty-ws token --host ${name} prints one)`);
    return text;
  };
  try {
    // Checked once now; read again at each dial.
    token();
    return { url: linkUrl(connect, instanceId, name), name, token };
  } catch (e) {
    throw new ConfigError([e instanceof Error ? e.message : String(e)]);
  }
}

/** The arguments that make a host read `launch` (readPtyHostConfig) on top of its defaults. */
export function ptyHostArgs(launch: PtyHostLaunch): string[] {
  const args = ['--socket', launch.socketPath, '--log-level', launch.logLevel];
  if (launch.startedBy !== undefined) args.push('--started-by', launch.startedBy);
  const { user, sandbox, network, hide } = launch.confinement;
  if (user === undefined && sandbox === 'none') return args;
  args.push('--session-sandbox', sandbox, '--session-network', network);
  if (hide.length > 0) args.push('--session-hide', hide.join(':'));
  if (user !== undefined) args.push('--session-user', user);
  return args;
}

/** The router's link route for `name`, from its base URL: wss://, or ws:// to a loopback address only. */
export function linkUrl(base: string, instanceId: string, name: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new Error(`--connect ${JSON.stringify(base)}: not a URL (wss://router.example, or ws://127.0.0.1:8121)`);
  }
  const scheme = ({ 'https:': 'wss:', 'wss:': 'wss:', 'http:': 'ws:', 'ws:': 'ws:' } as Record<string, string>)[url.protocol];
  if (!scheme) throw new Error(`--connect ${base}: expected a wss:// (or https://) URL`);
  if (scheme === 'ws:' && !isLoopback(url.hostname)) throw new Error(`--connect ${base}: plain ws:// only to a loopback address; use wss:// (the link carries every keystroke)`);
  url.protocol = scheme;
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/agents/${encodeURIComponent(instanceId)}/hosts/${encodeURIComponent(name)}/link`;
  url.search = '';
  url.hash = '';
  return url.toString();
}

function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

export interface ArgvPattern {
  /** The exact leading words: the program (absolute) and its fixed arguments. */
  words: readonly string[];
  /** A trailing `*`: any further arguments are allowed. */
  rest: boolean;
}

/** Parses one `--allow-command` value; throws an Error saying what is wrong. */
export function parseArgvPattern(text: string): ArgvPattern {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const rest = words.at(-1) === '*';
  if (rest) words.pop();
  const program = words[0];
  if (program === undefined) throw new Error(`--allow-command ${JSON.stringify(text)}: names no program`);
  // A bare name would be looked up on the PATH the router sends: the router would choose the program.
  if (!isPlainAbsolutePath(program)) throw new Error(`--allow-command ${JSON.stringify(text)}: the program must be an absolute, normalised path (${program})`);
  if (words.includes('*')) throw new Error(`--allow-command ${JSON.stringify(text)}: \`*\` may only be the last word (any further arguments)`);
  return { words, rest };
}

/**
 * An absolute path with no `.`, `..` or empty part (one trailing slash allowed): what node:path's
 * normalize would leave unchanged, checked without it so the host's settings stay portable.
 */
export function isPlainAbsolutePath(p: string): boolean {
  if (!p.startsWith('/')) return false;
  const parts = p.slice(1).replace(/\/$/, '').split('/');
  return p === '/' || parts.every((part) => part !== '' && part !== '.' && part !== '..');
}
