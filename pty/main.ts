// Entry point: `node --import tsx pty/main.ts --socket <path>` (or PTY_WS_PTY_SOCKET); settings are
// read by the same src/config.ts as the router's.
// Prints `pty-host listening <path>` on stdout once it accepts connections; logs JSON to stderr.

import { once } from 'node:events';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { lstat, unlink } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import path from 'node:path';
import { ConfigError, loadConfig, parseArgs, type Config } from '../src/config.ts';
import type { Logger } from '../src/ports.ts';
import { detectBackends } from './backends/detect.ts';
import { loadConfinement } from './confine.ts';
import { muxPaths } from './backends/paths.ts';
import { findFdCloser } from './backends/terminal-spawn.ts';
import { PtyHostServer } from './host.ts';
import { HostDialer, linkUrl } from './dial-out.ts';
import * as v from 'valibot';
import { HOST_TOKEN_PREFIX, HostName } from '../src/protocol/host-info.ts';
import { jsonLogger } from '../src/logger.ts';
import { nodeFileFacts } from '../src/adapter/node/file-facts.ts';
import { hopTraceFromEnv } from '../src/adapter/node/hop-trace.ts';
import { secureSocketDir } from '../src/private-files.ts';

/** Within this a stopping host has exited, short of the 5 s a router gives it before SIGKILL (pty/client.ts STOP_GRACE_MS). */
const SHUTDOWN_BOUND_MS = 4000;

async function main(config: Config, startedBy: string | undefined, remote: RemoteLink | undefined, log: Logger): Promise<void> {
  // Once a router that started us is gone, logging into its dead pipe must not kill the sessions.
  process.stderr.on('error', () => {});
  process.stdout.on('error', () => {});
  // Losing the host loses every session, so a stray exception is logged rather than fatal.
  process.on('uncaughtException', (err) => log.log('error', 'uncaught exception', { err }));
  process.on('unhandledRejection', (err) => log.log('error', 'unhandled rejection', { err }));

  const socketPath = path.resolve(config.ptySocket);

  secureSocketDir(path.dirname(socketPath), nodeFileFacts, log);
  await removeStaleSocket(socketPath);

  const launcher = await findFdCloser(log, config.sessionBaseEnv.PATH ?? '');
  const confinement = await loadConfinement({
    user: config.sessionUser,
    sandbox: config.sessionSandbox,
    network: config.sessionNetwork,
    // The multiplexers' directory may be outside the state dir (a short one under /tmp).
    hide: [path.dirname(socketPath), muxPaths(socketPath).dir, ...(config.sessionHide ?? [])],
    readOnly: [packageRoot()],
    hostHome: process.env.HOME,
    launcher,
    hostUid: process.getuid?.(),
  });
  if (confinement.report.user || confinement.report.sandbox !== 'none') log.log('info', 'sessions are confined', { ...confinement.report });
  else if (process.getuid?.() === 0) log.log('warn', 'sessions run as root, unconfined: whoever may create or type into a session owns this machine (PTY_WS_SESSION_USER, PTY_WS_SESSION_SANDBOX; docs/security.md)');
  // A router that started us may ask us to stop, as its successors on the same state dir may (they adopt us).
  const owner = startedBy === undefined ? undefined : { stateDir: startedBy, stop: () => void shutdown('shutdown request') };
  const host = new PtyHostServer(log, await detectBackends(socketPath, log, launcher, config.sessionBaseEnv.PATH), confinement, hopTraceFromEnv(process.env, 'host'), owner);
  // Before listening, so the first `list` already names the sessions an earlier host left.
  await host.recover();
  // A remote host serves its router over its link only (docs/remote-hosts.md): no local socket.
  const dialer = remote && new HostDialer({ url: remote.url, token: remote.token, logger: log.child({ link: remote.name }), accept: (link) => host.accept(link) });
  const server = remote ? undefined : createServer((socket) => host.accept(socket));
  if (server) {
    server.on('error', (err) => log.log('error', 'server error', { err }));
    // The socket is created with the process umask; narrowing it for the bind keeps the file
    // owner-only from its first instant instead of chmod-ing it after others could connect.
    const umask = process.umask(0o177);
    try {
      server.listen(socketPath);
    } finally {
      process.umask(umask);
    }
    await once(server, 'listening');
  }

  let stopping = false;
  async function shutdown(cause: NodeJS.Signals | 'shutdown request'): Promise<void> {
    if (stopping) return;
    stopping = true;
    log.log('info', 'shutting down', { cause, sessions: host.sessionCount });
    // Whatever the multiplexers do (each command may take its 10 s timeout), the host ends: a
    // stop that waits on them without bound looks like a SIGTERM ignored.
    setTimeout(() => process.exit(0), SHUTDOWN_BOUND_MS).unref();
    server?.close();
    dialer?.stop();
    try {
      await host.shutdown();
    } catch (err) {
      log.log('error', 'shutdown failed part way; exiting all the same', { err });
    }
    // libuv usually unlinks a closed pipe server's path already; `force` tolerates that.
    try {
      rmSync(socketPath, { force: true });
    } catch (err) {
      log.log('warn', 'could not remove socket', { err });
    }
    process.exit(0);
  }
  // Before the listening line: whoever reads it may stop the host at once, and until a handler
  // is set a SIGTERM ends the process by the default action (no clean shutdown, no exit code 0).
  process.once('SIGTERM', (signal) => void shutdown(signal));
  process.once('SIGINT', (signal) => void shutdown(signal));
  if (dialer && remote) {
    dialer.start();
    process.stdout.write(`pty-host dialing ${remote.url}\n`);
    return;
  }
  process.stdout.write(`pty-host listening ${socketPath}\n`);
  log.log('info', 'listening', { socket: socketPath });
}

/** `--connect`: the router this host dials in to, as which host, with which credential. */
interface RemoteLink {
  url: string;
  name: string;
  token(): string;
}

/** The directory of this package (its package.json): the server's own code, read-only to sandboxed sessions. */
function packageRoot(): string {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return import.meta.dirname;
  }
}

/** Removes a socket file left by a host that died, refusing to touch a live one or a non-socket. */
async function removeStaleSocket(socketPath: string): Promise<void> {
  const info = await lstat(socketPath).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!info) return;
  if (!info.isSocket()) throw new Error(`${socketPath} exists and is not a socket`);
  if (await isListening(socketPath)) throw new Error(`another process is already listening on ${socketPath}`);
  await unlink(socketPath);
}

function isListening(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/**
 * The router's settings, with `--socket` as the host's short name for `--pty-socket`, and
 * `--started-by`: the state directory of the router that starts this host (src/pty-host/launcher.ts).
 */
function readConfig(): { config: Config; startedBy: string | undefined; remote: RemoteLink | undefined } {
  const { socket, 'started-by': startedBy, connect, name, 'token-file': tokenFile, ...flags } = parseArgs(process.argv.slice(2)).flags;
  try {
    const config = loadConfig(process.env, socket === undefined ? flags : { ...flags, 'pty-socket': socket });
    return { config, startedBy, remote: connect === undefined && name === undefined && tokenFile === undefined ? undefined : remoteLink(connect, name, tokenFile, config.instanceId) };
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`pty-host: ${e.message}\n`);
    process.exit(2);
  }
}

/** `--connect URL --name NAME --token-file FILE`, all three: the link of a remote host (docs/remote-hosts.md). */
function remoteLink(connect: string | undefined, name: string | undefined, tokenFile: string | undefined, instanceId: string): RemoteLink {
  if (connect === undefined || name === undefined || tokenFile === undefined) throw new ConfigError(['--connect, --name and --token-file go together: the router, this host\'s name there, and the file holding its host credential']);
  const named = v.safeParse(HostName, name);
  if (!named.success) throw new ConfigError([`--name ${JSON.stringify(name)}: ${named.issues[0].message}`]);
  // Read at each dial (a new credential is picked up without a restart); checked once now.
  const token = (): string => {
    const text = readFileSync(tokenFile, 'utf8').trim();
    if (!text.startsWith(HOST_TOKEN_PREFIX)) throw new Error(`--token-file ${tokenFile}: not a host credential (pty-ws token --host ${name} prints one)`);
    return text;
  };
  try {
    token();
    return { url: linkUrl(connect, instanceId, name), name, token };
  } catch (e) {
    throw new ConfigError([(e as Error).message]);
  }
}

const { config, startedBy, remote } = readConfig();
const log = jsonLogger(config.logLevel, { component: 'pty-host', pid: process.pid }, { write: (line) => void process.stderr.write(line) });
main(config, startedBy, remote, log).catch((err: unknown) => {
  log.log('error', 'failed to start', { err });
  process.exit(1);
});
