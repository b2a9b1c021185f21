// Reaching a PTY host: connect to the one listening on the socket, or start one as a child
// process when nothing listens there.

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { LogLevel, Logger } from '../../ports.ts';
import { LISTENING_LINE, STOP_GRACE_MS, noHostListening, relayHostLog } from '../../../pty/client.ts';
import { PtyHostClient, type PtyHostClientOptions } from './pty-host-client.ts';

export interface EnsurePtyHostOptions {
  socketPath: string;
  /** Receives the host's log lines (re-logged with their level) and start-up events. */
  logger?: Logger;
  /** The log level of a host this call starts (default: its own default, info). */
  logLevel?: LogLevel;
  /** Extra command-line flags for a host this call starts. */
  hostFlags?: readonly string[];
  /** How long a started host may take to print its listening line. Default 15 s. */
  startTimeoutMs?: number;
  client?: Omit<PtyHostClientOptions, 'logger'>;
}

export interface PtyHostHandle {
  host: PtyHostClient;
  /** Present when this call started the host process. */
  child?: ChildProcess;
  /** Closes the client and, if this call started the host, terminates it. */
  stop(): Promise<void>;
  /** Closes the client and leaves a host this call started running on its own. */
  release(): Promise<void>;
}

/** Connects to the host at socketPath, starting one first when nothing listens there. */
export async function ensurePtyHost(options: EnsurePtyHostOptions): Promise<PtyHostHandle> {
  const socketPath = path.resolve(options.socketPath);
  const clientOptions = { ...options.client, logger: options.logger };
  try {
    const host = await PtyHostClient.connect(socketPath, clientOptions);
    options.logger?.log('info', 'using running pty host', { socket: socketPath, pid: host.hostPid });
    return { host, stop: () => host.close(), release: () => host.close() };
  } catch (err) {
    if (!noHostListening(err)) throw err;
  }
  const child = await startHostProcess(socketPath, options);
  try {
    const host = await PtyHostClient.connect(socketPath, clientOptions);
    return {
      host,
      child,
      stop: async () => {
        await host.close();
        await stopChild(child);
      },
      release: async () => {
        await host.close();
        releaseChild(child);
      },
    };
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

async function startHostProcess(socketPath: string, options: EnsurePtyHostOptions): Promise<ChildProcess> {
  const mainPath = fileURLToPath(new URL('../../../pty/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', mainPath, '--socket', socketPath, ...(options.hostFlags ?? [])], {
    // `--import tsx` resolves from the cwd, so run where this package's node_modules are.
    cwd: path.dirname(path.dirname(mainPath)),
    env: hostEnvironment(process.env, options.logLevel),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a Ctrl-C meant for the router must not kill the sessions before
    // the router has shut down in order (the router stops the host itself, or leaves it running).
    detached: true,
  });
  const log = options.logger?.child({ component: 'pty-host' });
  const stderrTail: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderrTail.push(line);
    if (stderrTail.length > 20) stderrTail.shift();
    if (log) relayHostLog(log, line);
    else process.stderr.write(`${line}\n`);
  });
  const stdout = createInterface({ input: child.stdout! });
  const timeoutMs = options.startTimeoutMs ?? 15_000;
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (why: string) => reject(new Error(`pty host ${why}${stderrTail.length ? `; its stderr:\n${stderrTail.join('\n')}` : ''}`));
      const timer = setTimeout(() => fail(`did not start listening within ${timeoutMs} ms`), timeoutMs);
      stdout.on('line', (line) => {
        if (!line.startsWith(LISTENING_LINE)) return;
        clearTimeout(timer);
        resolve();
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        fail(`could not be started: ${err.message}`);
      });
      // 'close' rather than 'exit' so the stderr explaining the death has been read.
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        fail(`exited before listening (code ${code}, signal ${signal})`);
      });
    });
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  log?.log('info', 'started pty host', { pid: child.pid, socket: socketPath });
  return child;
}

/**
 * The router's environment without its own settings (tokens, database credentials): the host
 * needs PATH and the like, never those. Sessions get a clean environment of their own anyway.
 */
function hostEnvironment(env: NodeJS.ProcessEnv, logLevel: LogLevel | undefined): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (!name.startsWith('PTY_WS_')) out[name] = value;
  if (logLevel) out.PTY_WS_LOG_LEVEL = logLevel;
  return out;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Lets a started host run on after this process: nothing of it keeps our event loop alive. */
function releaseChild(child: ChildProcess): void {
  child.stdout?.destroy();
  child.stderr?.destroy();
  child.unref();
}
