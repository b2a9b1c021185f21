// The one place that reads configuration: env vars and their --kebab-case flags (docs/configuration.md).
// Portable: the adapter passes in the environment and argv; nothing here touches process.env.
import * as v from 'valibot';

type Env = Record<string, string | undefined>;

const int = (min: number, max: number, below?: string) =>
  v.pipe(v.string(), v.regex(/^\d+$/, `an integer from ${min} to ${max}`), v.transform(Number), v.minValue(min, below), v.maxValue(max));
const floor = (min: number, max: number) => int(min, max, `at least ${min}, the replay floor of pty-ws-v1 §8.2 (docs/security.md)`);
const bool01 = v.pipe(v.picklist(['0', '1', 'true', 'false']), v.transform((s) => s === '1' || s === 'true'));
const onOff = v.pipe(v.picklist(['on', 'off']), v.transform((s) => s === 'on'));
const str = v.string();
const optStr = v.optional(v.string());
/** An http(s) origin with nothing after it: what clients are told to use (attach_url, the AgentCard). */
const publicUrl = v.optional(
  v.pipe(
    v.string(),
    v.check((s) => asOrigin(s) !== null, 'an http:// or https:// origin such as https://pty.example.com'),
    v.transform((s) => asOrigin(s)!),
  ),
);
const url = v.pipe(v.string(), v.regex(/^(file:|libsql:\/\/|https?:\/\/|wss?:\/\/)/, 'a file:, libsql://, http(s):// or ws(s):// URL'));
const logLevel = v.picklist(['debug', 'info', 'warn', 'error']);
/** Comma-separated host names, IP addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`, `[::1]`). */
const hostList = v.pipe(
  v.string(),
  v.transform((s) => s.split(',').map((h) => h.trim()).filter(Boolean)),
  v.check((list) => list.every((h) => /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._:-]+)(\/\d{1,3})?$/.test(h)), 'comma-separated host names, IP addresses or CIDR ranges such as hooks.internal,10.0.0.0/8'),
);
/** `*`, or comma-separated origins (`https://app.example.com`), normalised the way browsers send them. */
const originList = v.optional(
  v.pipe(
    v.string(),
    v.transform((s) => s.split(',').map((o) => o.trim()).filter(Boolean)),
    v.check((list) => list.length > 0 && list.every((o) => o === '*' || asOrigin(o) !== null), '* or comma-separated origins such as https://app.example.com'),
    v.transform((list) => list.map((o) => (o === '*' ? o : asOrigin(o)!))),
  ),
);

/**
 * The replay floor (docs/protocol.md §6.5, docs/security.md attack 7): the larger of 1000 frames and
 * 24 hours must stay replayable, so neither may be configured lower. Tests that need a short log
 * set the Config fields in code (test/helpers/server.ts `overrides`); production refuses even that.
 */
export const MIN_REPLAY_FRAMES = 1000;

/**
 * An instance whose heartbeat is older than this many of its own intervals is unreachable
 * (docs/deployment.md, "A fleet"): one missed beat (a slow database write, a GC pause) is not an
 * outage, three are. Its clock and the reader's must agree to well within that (NTP).
 */
export const HEARTBEAT_MISSES = 3;
export const MIN_REPLAY_SECONDS = 86_400;

/**
 * The default reserve of instance connections for pty:admin is this fraction of them (docs/security.md,
 * attack 8): enough for an administrator's page, CLI and a few streams at the default 256, and 0 on
 * an instance configured below 32, where the operator sets it if wanted.
 */
const ADMIN_RESERVED_SHARE = 32;

interface Setting {
  env: string;
  default: string | ((env: Env, partial: Record<string, unknown>) => string | undefined);
  schema: v.GenericSchema<string | undefined, unknown>;
  help: string;
}

/** Setting key → definition. Keys are the Config field names. */
const SETTINGS = {
  host: { env: 'PTY_WS_HOST', default: '127.0.0.1', schema: str, help: 'bind address' },
  port: { env: 'PTY_WS_PORT', default: '8121', schema: int(0, 65535), help: 'port; 0 = any free port' },
  instanceId: {
    env: 'PTY_WS_INSTANCE_ID',
    default: 'local',
    schema: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, . _ - (1..64)')),
    help: 'the {instance_id} this server answers for',
  },
  stateDir: { env: 'PTY_WS_STATE_DIR', default: '.pty-ws', schema: str, help: 'database file, PTY host socket, dev token' },
  databaseUrl: {
    env: 'PTY_WS_DATABASE_URL',
    default: (_e, p) => `file:${String(p.stateDir)}/pty-ws.db`,
    schema: url,
    help: 'libSQL URL (default file:<state dir>/pty-ws.db)',
  },
  databaseAuthToken: { env: 'PTY_WS_DATABASE_AUTH_TOKEN', default: () => undefined, schema: optStr, help: 'auth token for a remote libSQL/Turso database' },
  databaseAuthTokenFile: {
    env: 'PTY_WS_DATABASE_AUTH_TOKEN_FILE',
    default: () => undefined,
    schema: optStr,
    help: 'read PTY_WS_DATABASE_AUTH_TOKEN from this file (ours, 0600): kept out of the environment',
  },
  tokensFile: { env: 'PTY_WS_TOKENS_FILE', default: () => undefined, schema: optStr, help: 'hash-only token map; when set, attach needs a bearer' },
  jwtSecret: { env: 'PTY_WS_JWT_SECRET', default: () => undefined, schema: optStr, help: 'accept HS256 JWT bearers signed with this secret' },
  jwtSecretFile: { env: 'PTY_WS_JWT_SECRET_FILE', default: () => undefined, schema: optStr, help: 'read PTY_WS_JWT_SECRET from this file (ours, 0600): kept out of the environment' },
  jwtPublicKey: { env: 'PTY_WS_JWT_PUBLIC_KEY', default: () => undefined, schema: optStr, help: 'accept JWT bearers verified with this PEM/JWK public key' },
  jwksUrl: { env: 'PTY_WS_JWKS_URL', default: () => undefined, schema: optStr, help: 'accept JWT bearers verified against this JWKS URL' },
  jwtIssuer: { env: 'PTY_WS_JWT_ISSUER', default: () => undefined, schema: optStr, help: 'required JWT iss' },
  jwtAudience: { env: 'PTY_WS_JWT_AUDIENCE', default: () => undefined, schema: optStr, help: 'required JWT aud' },
  devTokenPolicy: {
    env: 'PTY_WS_DEV_TOKEN_POLICY',
    default: 'keep',
    schema: v.picklist(['keep', 'per-start']),
    help: 'keep = one dev token across restarts (its hash in <state dir>/dev-token.json; `pty-ws token` makes a new one); per-start = a new one at every start, nothing stored',
  },
  auth: { env: 'PTY_WS_AUTH', default: 'on', schema: onOff, help: 'off = no bearer needed (local development only)' },
  production: { env: 'PTY_WS_PRODUCTION', default: '0', schema: bool01, help: '1 = wss only, auth and subprotocol required' },
  tlsCert: { env: 'PTY_WS_TLS_CERT', default: () => undefined, schema: optStr, help: 'serve https/wss with this certificate file' },
  tlsKey: { env: 'PTY_WS_TLS_KEY', default: () => undefined, schema: optStr, help: 'private key file for PTY_WS_TLS_CERT' },
  tlsClientCa: { env: 'PTY_WS_TLS_CLIENT_CA', default: () => undefined, schema: optStr, help: 'mTLS: accept client certificates issued by this CA (PEM file); CN = principal, OU = scopes' },
  allowPlaintext: {
    env: 'PTY_WS_ALLOW_PLAINTEXT',
    default: '0',
    schema: bool01,
    help: '1 = serve plain http/ws on a non-loopback PTY_WS_HOST (tokens and terminals travel unencrypted)',
  },
  publicUrl: { env: 'PTY_WS_PUBLIC_URL', default: () => undefined, schema: publicUrl, help: 'the origin clients reach this server at (attach_url, AgentCard); default: the request Host if it names this server, else the bound address' },
  trustProxyTls: { env: 'PTY_WS_TRUST_PROXY_TLS', default: '0', schema: bool01, help: 'trust X-Forwarded-Proto: https from a TLS proxy' },
  allowedOrigins: { env: 'PTY_WS_ALLOWED_ORIGINS', default: () => undefined, schema: originList, help: 'browser Origins allowed to upgrade, comma-separated (* = any; default same origin)' },
  pingIntervalMs: { env: 'PTY_WS_PING_INTERVAL_MS', default: '30000', schema: int(100, 3_600_000), help: 'WebSocket Ping cadence' },
  pongTimeoutMs: { env: 'PTY_WS_PONG_TIMEOUT_MS', default: '90000', schema: int(100, 3_600_000), help: 'no Pong for this long = stale: reap, release roles' },
  instanceLeaseMs: { env: 'PTY_WS_INSTANCE_LEASE_MS', default: '15000', schema: int(1000, 3_600_000), help: "the instance's lease in the database lasts this long, renewed every third of it; a dead holder's expires after it" },
  heartbeatMs: {
    env: 'PTY_WS_HEARTBEAT_MS',
    default: '5000',
    schema: int(100, 3_600_000),
    help: `how often this instance records itself alive in the shared database's instance registry; ${HEARTBEAT_MISSES} intervals without one = unreachable (GET /instances)`,
  },
  maxControllers: { env: 'PTY_WS_MAX_CONTROLLERS', default: '4', schema: int(1, 1024), help: 'extension param max_controllers' },
  maxObservers: { env: 'PTY_WS_MAX_OBSERVERS', default: '32', schema: int(0, 4096), help: 'extension param max_observers' },
  keyframeIntervalSeconds: { env: 'PTY_WS_KEYFRAME_INTERVAL_SECONDS', default: '5', schema: int(1, 86_400), help: 'extension param keyframe_interval_seconds' },
  keyframeIntervalFrames: { env: 'PTY_WS_KEYFRAME_INTERVAL_FRAMES', default: '100', schema: int(1, 1_000_000), help: 'extension param keyframe_interval_frames' },
  replayBufferFrames: { env: 'PTY_WS_REPLAY_BUFFER_FRAMES', default: '1000', schema: floor(MIN_REPLAY_FRAMES, 100_000_000), help: `extension param replay_buffer_frames (at least ${MIN_REPLAY_FRAMES})` },
  replayRetentionSeconds: {
    env: 'PTY_WS_REPLAY_RETENTION_SECONDS',
    default: '86400',
    schema: floor(MIN_REPLAY_SECONDS, 31_536_000),
    help: `extension param replay_buffer_retention_seconds (at least ${MIN_REPLAY_SECONDS})`,
  },
  endedRetentionSeconds: {
    env: 'PTY_WS_ENDED_RETENTION_SECONDS',
    default: '604800',
    schema: int(60, 315_360_000),
    help: 'an ended session is deleted this long after it ended, with its log, tasks and share links; so are finished tasks and revoked or expired share links of live sessions (docs/operations.md, "Disk")',
  },
  sessionLogBudgetBytes: {
    env: 'PTY_WS_SESSION_LOG_BUDGET_BYTES',
    default: String(1024 * 1024 * 1024),
    schema: int(1024 * 1024, Number.MAX_SAFE_INTEGER),
    help: "most bytes of one session's log: past it its oldest frames are deleted (within a minute), replay retention or not",
  },
  logBudgetBytes: {
    env: 'PTY_WS_LOG_BUDGET_BYTES',
    default: String(8 * 1024 * 1024 * 1024),
    schema: int(1024 * 1024, Number.MAX_SAFE_INTEGER),
    help: "most bytes of this instance's logs together: past it ended sessions' logs go first, oldest ended first, then live sessions' oldest frames, and new sessions are refused (507 log_budget_exceeded) until they are back under",
  },
  maxConnectionsPerPrincipal: { env: 'PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL', default: '16', schema: int(1, 100_000), help: 'open attaches and A2A streams per principal' },
  maxConnectionsPerInstance: { env: 'PTY_WS_MAX_CONNECTIONS_PER_INSTANCE', default: '256', schema: int(1, 1_000_000), help: 'open attaches and A2A streams per instance' },
  adminReservedConnections: {
    env: 'PTY_WS_ADMIN_RESERVED_CONNECTIONS',
    default: (_e, p) => String(Math.floor(Number(p.maxConnectionsPerInstance ?? 0) / ADMIN_RESERVED_SHARE)),
    schema: int(0, 1_000_000),
    help: `places of PTY_WS_MAX_CONNECTIONS_PER_INSTANCE only pty:admin may take, so an administrator can always get in (default 1/${ADMIN_RESERVED_SHARE} of it: 8 of 256); fewer than it`,
  },
  a2aContextIdleSeconds: {
    env: 'PTY_WS_A2A_CONTEXT_IDLE_SECONDS',
    default: '600',
    schema: int(0, 31_536_000),
    help: 'a session an A2A message started (no contextId) ends after this long with no task and no attached client; 0 = never (docs/a2a.md)',
  },
  pushAllowHosts: {
    env: 'PTY_WS_PUSH_ALLOW_HOSTS',
    default: () => '',
    schema: hostList,
    help: 'push-notification webhooks may reach these loopback, private or link-local targets: host names, addresses or CIDR ranges, comma-separated (default none; docs/security.md)',
  },
  pushAllowHttpLoopback: {
    env: 'PTY_WS_PUSH_ALLOW_HTTP_LOOPBACK',
    default: '0',
    schema: bool01,
    help: '1 = plain http:// webhooks to a loopback address (a receiver on this machine, which PTY_WS_PUSH_ALLOW_HOSTS must also name); else https only',
  },
  maxSessionsPerPrincipal: { env: 'PTY_WS_MAX_SESSIONS_PER_PRINCIPAL', default: '64', schema: int(1, 1_000_000), help: 'sessions of this instance one principal may have created that have not ended, by REST or A2A; beyond: RATE_LIMITED (HTTP 429)' },
  ptySocket: { env: 'PTY_WS_PTY_SOCKET', default: (_e, p) => `${String(p.stateDir)}/pty-host.sock`, schema: str, help: 'PTY host Unix socket; if nothing listens, the router starts one' },
  defaultShell: {
    env: 'PTY_WS_DEFAULT_SHELL',
    default: (e) => (e.SHELL ? `${e.SHELL} -l` : '/bin/sh -l'),
    schema: v.pipe(v.string(), v.minLength(1, 'a command')),
    help: 'command for sessions that name none (default $SHELL -l, else /bin/sh -l)',
  },
  defaultSessionBackend: {
    env: 'PTY_WS_DEFAULT_SESSION_BACKEND',
    default: 'auto',
    schema: v.picklist(['auto', 'native']),
    help: "the default session of `start`: auto = tmux when the PTY host has it (the shell outlives a router restart), else native; native = always native (it ends with the router)",
  },
  logLevel: { env: 'PTY_WS_LOG_LEVEL', default: 'info', schema: logLevel, help: 'debug, info, warn or error' },
  sessionUser: {
    env: 'PTY_WS_SESSION_USER',
    default: () => undefined,
    schema: v.optional(v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_.-]{0,31}$/i, 'a user name'))),
    help: 'run session processes as this unprivileged user (the PTY host must run as root); docs/security.md',
  },
  sessionSandbox: {
    env: 'PTY_WS_SESSION_SANDBOX',
    default: 'none',
    schema: v.picklist(['none', 'bwrap']),
    help: 'bwrap = run each session in a bubblewrap sandbox that hides the state dir, sockets and other sessions',
  },
  sessionNetwork: {
    env: 'PTY_WS_SESSION_NETWORK',
    default: 'host',
    schema: v.picklist(['host', 'none']),
    help: "with the bwrap sandbox: host = sessions share the machine's network (the router's port, a fleet's sqld); none = a network namespace of their own with loopback only",
  },
  sessionHide: {
    env: 'PTY_WS_SESSION_HIDE',
    default: () => undefined,
    schema: v.optional(v.pipe(v.string(), v.transform((s) => s.split(':').filter(Boolean)), v.check((l) => l.every((d) => d.startsWith('/')), 'absolute paths separated by :'))),
    help: 'with the bwrap sandbox: more paths sessions must not see, :-separated (a directory shows empty, a file as /dev/null; the state, socket and database dirs and every secret, key and token file always are)',
  },
} satisfies Record<string, Setting>;


type Key = keyof typeof SETTINGS;
type Settings = { [K in Key]: v.InferOutput<(typeof SETTINGS)[K]['schema']> };

export interface Config extends Settings {
  /** Largest WebSocket message accepted; larger ones close the connection with 1009. */
  maxFrameBytes: number;
  /** Upgrade attempts one principal may make per second; beyond: HTTP 429 before the upgrade. */
  upgradeAttemptsPerSecond: number;
  /** Failed authentications (HTTP 401) one remote address may cause per window; beyond: 429 for everything it asks. */
  authFailures: { burst: number; windowMs: number };
  /** Frames one connection may send: a token bucket, then RATE_LIMITED; close 4429 after `strikesToClose` seconds of it. */
  frameRate: { perSecond: number; burst: number; strikesToClose: number };
  /** A connection must have sent its request headers within this long (node:http headersTimeout), its whole request within requestTimeoutMs. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /**
   * TCP connections that have not yet sent a complete request, in all and per remote address (an
   * IPv6 /64 counts as one); past either, the longest-waiting one of that address, or of the
   * address with the most waiting, is closed to make room.
   */
  maxPendingConnections: number;
  maxPendingConnectionsPerAddress: number;
  defaultCols: number;
  defaultRows: number;
  /** Slow-consumer policy: see Member. */
  lag: { highBytes: number; lowBytes: number; pollMs: number };
  /** How long sessions wait for an unreachable PTY host before they are closed (reason `error`). */
  ptyHostLossGraceMs: number;
  /** How often retention and the log budgets are applied (src/router/retention-sweep.ts). */
  retentionSweepMs: number;
  /** The clean environment every session starts from: never the server's own secrets. */
  sessionBaseEnv: Record<string, string>;
  defaultCwd: string;
  /** Push-notification delivery (docs/a2a.md, "Push notifications"). */
  push: PushSettings;
}

export interface PushSettings {
  /** Tries per notification, the first included; then it is a dead letter. */
  attempts: number;
  /** The wait before the second try; each later wait doubles up to `maxRetryMs`, each jittered down by up to half. */
  firstRetryMs: number;
  maxRetryMs: number;
  /** Longest one POST may take. */
  timeoutMs: number;
  /** How long a claimed notification is one router's to send (renewed per artifact chunk). */
  leaseMs: number;
  /** Longest the worker sleeps without looking at the outbox. */
  idlePollMs: number;
  /** Notifications on their way at once (each to a different config), and of them, per principal that set the configs. */
  concurrency: number;
  concurrencyPerPrincipal: number;
  /** Undelivered notifications one config may have; beyond, the oldest but the first are dead letters. */
  maxQueuedPerConfig: number;
  /** Configs one principal may set on one task. */
  maxConfigsPerTask: number;
}

/**
 * Six tries over about ten minutes: waits of 20 s, 40 s, 80 s, 160 s and 300 s, each jittered
 * down by up to half, so webhooks that failed together are not retried together.
 */
export const PUSH_SETTINGS: PushSettings = {
  attempts: 6,
  firstRetryMs: 20_000,
  maxRetryMs: 300_000,
  timeoutMs: 10_000,
  leaseMs: 60_000,
  idlePollMs: 30_000,
  concurrency: 16,
  concurrencyPerPrincipal: 4,
  maxQueuedPerConfig: 256,
  maxConfigsPerTask: 16,
};

/**
 * Upgrade attempts one principal may make per second (docs/protocol.md §1.6): generous for people and
 * agents reconnecting, small enough that a runaway loop is cut off at once.
 */
export const UPGRADE_ATTEMPTS_PER_SECOND = 20;

/**
 * Failed authentications per remote address (docs/security.md, attack 8): a client with a stale
 * token retries a few times; a guesser is cut off after the burst until the window has passed.
 */
export const AUTH_FAILURES = { burst: 30, windowMs: 60_000 };

/**
 * Frames per connection (docs/security.md, attack 8). A typist sends ~20 a second and a paste is
 * one frame; the burst covers a client replaying thousands of queued frames at once (the fuzz test
 * sends 3000). Sustained floods get one RATE_LIMITED a second, then close 4429.
 */
export const FRAME_RATE = { perSecond: 2_000, burst: 10_000, strikesToClose: 5 };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

const kebab = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export interface ParsedArgs {
  command: string | undefined;
  positional: string[];
  flags: Record<string, string>;
  help: boolean;
}

/** `cmd pos... --flag value --flag=value --bool-flag`; a flag with no value gets "1". */
export function parseArgs(argv: string[], booleanFlags: string[] = []): ParsedArgs {
  const out: ParsedArgs = { command: undefined, positional: [], flags: {}, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') {
      out.help = true;
    } else if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
      if (eq >= 0) out.flags[name] = a.slice(eq + 1);
      else if (booleanFlags.includes(name) || i + 1 >= argv.length || argv[i + 1]!.startsWith('--')) out.flags[name] = '1';
      else out.flags[name] = argv[++i]!;
    } else if (out.command === undefined) {
      out.command = a;
    } else {
      out.positional.push(a);
    }
  }
  return out;
}

/** Reads every setting from flags (first), then env, then the default; throws ConfigError naming each bad one. */
export function loadConfig(env: Env, flags: Record<string, string> = {}): Config {
  const { out, problems } = readSettings(Object.keys(SETTINGS) as Key[], env, flags);
  const { adminReservedConnections: reserved, maxConnectionsPerInstance: perInstance } = out;
  if (reserved !== undefined && perInstance !== undefined && reserved >= perInstance) {
    problems.push(`PTY_WS_ADMIN_RESERVED_CONNECTIONS (--admin-reserved-connections): expected fewer than PTY_WS_MAX_CONNECTIONS_PER_INSTANCE (${perInstance}), got ${reserved}`);
  }
  if (problems.length) throw new ConfigError(problems);

  const cfg = out as Settings;
  return {
    ...cfg,
    maxFrameBytes: 1024 * 1024,
    upgradeAttemptsPerSecond: UPGRADE_ATTEMPTS_PER_SECOND,
    authFailures: AUTH_FAILURES,
    frameRate: FRAME_RATE,
    headersTimeoutMs: 5_000,
    requestTimeoutMs: 15_000,
    maxPendingConnections: 128,
    maxPendingConnectionsPerAddress: 64,
    defaultCols: 120,
    defaultRows: 30,
    lag: { highBytes: 16 * 1024 * 1024, lowBytes: 1024 * 1024, pollMs: 50 },
    ptyHostLossGraceMs: 15_000,
    retentionSweepMs: 60_000,
    sessionBaseEnv: sessionBaseEnv(env),
    defaultCwd: env.HOME || '/',
    push: PUSH_SETTINGS,
  };
}

/**
 * Only the named settings, as loadConfig reads them; a flag of any other is refused. For a process
 * that needs a few of them (the PTY host: pty/wire/host-config.ts), so that the others, which it never
 * uses, can neither stop it nor be handed to it.
 */
export function loadSettings<K extends Key>(keys: readonly K[], env: Env, flags: Record<string, string> = {}): Pick<Settings, K> {
  const { out, problems } = readSettings(keys, env, flags);
  if (problems.length) throw new ConfigError(problems);
  return out as Pick<Settings, K>;
}

/** `keys` in the order SETTINGS lists them (a default may depend on an earlier one: ptySocket on stateDir). */
function readSettings(keys: readonly Key[], env: Env, flags: Record<string, string>): { out: Partial<Settings>; problems: string[] } {
  const problems: string[] = [];
  const known = new Set(keys.map(kebab));
  for (const f of Object.keys(flags)) if (!known.has(f)) problems.push(`unknown flag --${f} (see --help)`);
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SETTINGS) as Array<[Key, Setting]>) {
    if (!keys.includes(key)) continue;
    const raw = flags[kebab(key)] ?? nonEmpty(env[s.env]) ?? (typeof s.default === 'function' ? s.default(env, out) : s.default);
    const r = v.safeParse(s.schema, raw);
    if (r.success) out[key] = r.output;
    else problems.push(`${s.env} (--${kebab(key)}): expected ${expectation(r.issues[0])}, got ${JSON.stringify(raw)}`);
  }
  return { out: out as Partial<Settings>, problems };
}

const PASSED_TO_SESSIONS = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR'];

/** The clean environment every session starts from (Config.sessionBaseEnv). */
export function sessionBaseEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = { TERM: 'xterm-256color', COLORTERM: 'truecolor' };
  for (const name of PASSED_TO_SESSIONS) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  out.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return out;
}

/** Valibot's own messages read "Invalid type: Expected X but received Y": keep X. */
function expectation(issue: v.BaseIssue<unknown>): string {
  return /Expected (.*) but received/.exec(issue.message)?.[1] ?? issue.message;
}

function asOrigin(s: string): string | null {
  try {
    const u = new URL(s);
    return /^https?:$/.test(u.protocol) && (u.pathname === '/' || u.pathname === '') && !u.search && !u.hash ? u.origin : null;
  } catch {
    return null;
  }
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s === '' ? undefined : s;
}

/** Every setting as the docs list it (docs/configuration.md, checked by test/docs/configuration-doc.test.ts). */
export function settingsList(): Array<{ env: string; flag: string; default: string | null; help: string }> {
  return Object.entries(SETTINGS).map(([key, s]: [string, Setting]) => ({ env: s.env, flag: `--${kebab(key)}`, default: typeof s.default === 'function' ? null : s.default, help: s.help }));
}

export function settingsHelp(): string {
  const rows = Object.entries(SETTINGS).map(([key, s]: [string, Setting]) => {
    const def = typeof s.default === 'function' ? '' : ` (default ${s.default})`;
    return `  --${kebab(key)}  ${s.env}\n      ${s.help}${def}`;
  });
  return rows.join('\n');
}

/** The client commands' settings (`attach`, `sessions`): flags first, then env (docs/cli.md). */
export interface ClientConfig {
  /** Bearer token: --token or PTY_WS_TOKEN. */
  token: string | undefined;
  /** The server for `sessions`: --url or PTY_WS_URL, default http://127.0.0.1:<PTY_WS_PORT or 8121>. */
  serverUrl: string;
  /** --instance or PTY_WS_INSTANCE_ID, default local. */
  instanceId: string;
}

export function loadClientConfig(env: Env, flags: Record<string, string>): ClientConfig {
  const serverUrl = flags.url ?? nonEmpty(env.PTY_WS_URL) ?? `http://127.0.0.1:${nonEmpty(env.PTY_WS_PORT) ?? '8121'}`;
  if (!/^https?:\/\/[^/]+/.test(serverUrl)) throw new ConfigError([`PTY_WS_URL (--url): expected an http(s):// server URL, got ${JSON.stringify(serverUrl)}`]);
  return {
    token: flags.token ?? nonEmpty(env.PTY_WS_TOKEN),
    serverUrl: serverUrl.replace(/\/+$/, ''),
    instanceId: flags.instance ?? nonEmpty(env.PTY_WS_INSTANCE_ID) ?? 'local',
  };
}
