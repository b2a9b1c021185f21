// The PTY host process: listens on its socket for routers (or, with --connect, dials in to one:
// docs/remote-hosts.md) and runs their sessions. Started by
// src/adapter/node/pty-host-main.ts (the process a router spawns) or by `pty-ws pty-host`, each with the settings it
// read once (pty/wire/host-config.ts). Prints `pty-host listening <path>` on stdout once it accepts
// connections; logs JSON to stderr.

import { once } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import { lstat, unlink } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import path from 'node:path';
import type { Logger } from '../../ports/logger.ts';
import { detectBackends } from '../../../pty/backends/detect.ts';
import { loadConfinement } from '../../../pty/confine.ts';
import { muxPaths } from '../../../pty/backends/paths.ts';
import { findFdCloser } from '../../../pty/backends/terminal-spawn.ts';
import type { PtyHostConfig } from '../../../pty/wire/host-config.ts';
import { PtyHostServer } from '../../../pty/host.ts';
import { HostDialer } from '../../../pty/dial-out.ts';
import { offeredBackends, remotePolicy } from '../../../pty/remote-policy.ts';
import { formatPattern } from '../../../pty/host-policy.ts';
import { jsonLogger } from '../../services/logger.ts';
import { nodeFileFacts } from './file-facts.ts';
import { hopTraceFromEnv } from './hop-trace.ts';
import { secureSocketDir } from '../../services/private-files.ts';

/** Within this a stopping host has exited, short of the 5 s a router gives it before SIGKILL (src/host-link/client.ts STOP_GRACE_MS). */
const SHUTDOWN_BOUND_MS = 4000;

/**
 * Runs the host with `config` until SIGTERM, SIGINT or a shutdown request, which end the process.
 * Resolves once it listens; a host that cannot start logs why and exits with status 1.
 */
export async function runPtyHost(config: PtyHostConfig): Promise<void> {
  const log = jsonLogger(config.logLevel, { component: 'pty-host', pid: process.pid }, { write: (line) => void process.stderr.write(line) });
  try {
    await serve(config, log);
  } catch (error) {
    log.log('error', 'failed to start', { error });
    process.exit(1);
  }
}

async function serve(config: PtyHostConfig, log: Logger): Promise<void> {
  // Once a router that started us is gone, logging into its dead pipe must not kill the sessions.
  process.stderr.on('error', () => {});
  process.stdout.on('error', () => {});
  // Losing the host loses every session, so a stray exception is logged rather than fatal.
  process.on('uncaughtException', (err) => log.log('error', 'uncaught exception', { error: err }));
  process.on('unhandledRejection', (err) => log.log('error', 'unhandled rejection', { error: err }));

  const { socketPath, startedBy } = config;

  secureSocketDir(path.dirname(socketPath), nodeFileFacts, log);
  await removeStaleSocket(socketPath);

  const launcher = await findFdCloser(log, config.path);
  const confinement = await loadConfinement({
    ...config.confinement,
    // The multiplexers' directory may be outside the state dir (a short one under /tmp).
    hide: [path.dirname(socketPath), muxPaths(socketPath).dir, ...config.confinement.hide],
    readOnly: [packageRoot()],
    hostHome: config.home,
    launcher,
    hostUid: process.getuid?.(),
  });
  if (confinement.report.user || confinement.report.sandbox !== 'none') log.log('info', 'sessions are confined', { ...confinement.report });
  else if (process.getuid?.() === 0) log.log('warn', 'sessions run as root, unconfined: whoever may create or type into a session owns this machine (PTY_WS_SESSION_USER, PTY_WS_SESSION_SANDBOX; docs/security.md)');
  // A router that started us may ask us to stop, as its successors on the same state dir may (they adopt us).
  const owner = startedBy === undefined ? undefined : { stateDir: startedBy, stop: () => void shutdown('shutdown request') };
  const { remote } = config;
  const found = await detectBackends(socketPath, log, launcher, config.path);
  // A remote host runs only what its own policy allows, whatever its router asks (docs/remote-hosts.md).
  const policy = remote && (await remotePolicy(remote, config.confinement.user));
  const backends = remote ? offeredBackends(found, remote) : found;
  if (policy) log.log('info', 'host policy', { allow_commands: policy.allowed.map(formatPattern), backends: backends.map((b) => b.name) });
  const host = new PtyHostServer(log, backends, confinement, hopTraceFromEnv(process.env, 'host'), owner, policy);
  // Before listening, so the first `list` already names the sessions an earlier host left.
  await host.recover();
  // A remote host serves its router over its link only (docs/remote-hosts.md): no local socket.
  const dialer = remote && new HostDialer({ url: remote.url, token: remote.token, logger: log.child({ link: remote.name }), accept: (link) => host.accept(link) });
  const server = remote ? undefined : createServer((socket) => host.accept(socket));
  if (server) {
    server.on('error', (error) => log.log('error', 'server error', { error }));
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
    } catch (error) {
      log.log('error', 'shutdown failed part way; exiting all the same', { error });
    }
    // libuv usually unlinks a closed pipe server's path already; `force` tolerates that.
    try {
      rmSync(socketPath, { force: true });
    } catch (error) {
      log.log('warn', 'could not remove socket', { error });
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
