// The router's side of the PTY host socket on Node (pty/client.ts over node:net), plus starting a
// host process when none is listening.

import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../ports.ts';
import { LISTENING_LINE, PtyHostConnection, STOP_GRACE_MS, noHostListening, relayHostLog, type HostSocket, type PtyHostClientOptions } from '../../../pty/client.ts';
import { PtyHostError } from '../../../pty/protocol.ts';

export { PtyHostError, type PtyHostClientOptions };

/** The portable PTY host connection over a node:net Unix socket. */
export class PtyHostClient extends PtyHostConnection {
  /** Connects and waits for the host's greeting. Rejects with the socket error (ENOENT, ECONNREFUSED, ...). */
  static connect(socketPath: string, options: PtyHostClientOptions = {}): Promise<PtyHostClient> {
    return PtyHostConnection.greet(new PtyHostClient(nodeHostSocket(createConnection(socketPath)), options), socketPath, options.timeoutMs);
  }
}

function nodeHostSocket(socket: Socket): HostSocket {
  return {
    write: (bytes) => void socket.write(bytes),
    end: () => void socket.end(),
    destroy: () => void socket.destroy(),
    get writable() {
      return socket.writable;
    },
    get closed() {
      return socket.closed;
    },
    listen(events) {
      socket.on('data', (chunk: Buffer) => events.data(chunk));
      socket.on('error', (err) => events.error(err));
      socket.on('close', () => events.close());
    },
  };
}

// ---------------------------------------------------------------- starting a host

export interface EnsurePtyHostOptions {
  socketPath: string;
  /** Receives the host's log lines (re-logged with their level) and start-up events. */
  logger?: Logger;
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
}

/** Connects to the host at socketPath, starting one first when nothing listens there. */
export async function ensurePtyHost(options: EnsurePtyHostOptions): Promise<PtyHostHandle> {
  const socketPath = path.resolve(options.socketPath);
  const clientOptions = { ...options.client, logger: options.logger };
  try {
    const host = await PtyHostClient.connect(socketPath, clientOptions);
    options.logger?.log('info', 'using running pty host', { socket: socketPath });
    return { host, stop: () => host.close() };
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
    };
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

async function startHostProcess(socketPath: string, options: EnsurePtyHostOptions): Promise<ChildProcess> {
  const mainPath = fileURLToPath(new URL('../../../pty/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', mainPath, '--socket', socketPath], {
    // `--import tsx` resolves from the cwd, so run where this package's node_modules are.
    cwd: path.dirname(path.dirname(mainPath)),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a Ctrl-C meant for the router must not kill the sessions before
    // the router has shut down in order (the router stops the host itself).
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
