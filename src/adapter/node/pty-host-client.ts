// The router's side of the PTY host socket (see pty/protocol.ts), plus starting a host
// process when none is listening.

import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { LogLevel, Logger, PtyHost, PtyHostListener, PtySessionInfo, SpawnSpec } from '../../ports.ts';
import {
  FrameDecoder,
  HostMessageSchema,
  MAX_BODY_BYTES,
  PROTOCOL_VERSION,
  PtyHostError,
  encodeFrame,
  type HostMessage,
  type Request,
} from '../../../pty/protocol.ts';

export { PtyHostError };

export interface PtyHostClientOptions {
  /** How long connecting and the host's greeting may take. Default 5 s. */
  timeoutMs?: number;
  /** How long a spawn or list may go unanswered. Default 10 s. */
  requestTimeoutMs?: number;
  /** Receives listener failures; without it they go to console.error. */
  logger?: Logger;
}

type Reply = Extract<HostMessage, { rid: number }>;

interface Pending {
  resolve(reply: Reply): void;
  reject(err: PtyHostError): void;
  timer: ReturnType<typeof setTimeout>;
}

export class PtyHostClient implements PtyHost {
  readonly #socket: Socket;
  readonly #decoder = new FrameDecoder(HostMessageSchema);
  readonly #requestTimeoutMs: number;
  readonly #logger: Logger | undefined;
  readonly #listeners = new Set<PtyHostListener>();
  readonly #pending = new Map<number, Pending>();
  readonly #greeted: Promise<void>;
  #greet: { resolve(): void; reject(err: Error): void } | undefined;
  #nextRid = 1;
  /** Set once the connection is over, whether by close() or by losing it. */
  #ended = false;
  #lossReason: string | undefined;

  /** Connects and waits for the host's greeting. Rejects with the socket error (ENOENT, ECONNREFUSED, ...). */
  static async connect(socketPath: string, options: PtyHostClientOptions = {}): Promise<PtyHostClient> {
    const timeoutMs = options.timeoutMs ?? 5000;
    const client = new PtyHostClient(createConnection(socketPath), options);
    const timer = setTimeout(() => client.#fail(new Error(`no pty host greeting on ${socketPath} within ${timeoutMs} ms`)), timeoutMs);
    try {
      await client.#greeted;
      return client;
    } finally {
      clearTimeout(timer);
    }
  }

  private constructor(socket: Socket, options: PtyHostClientOptions) {
    this.#socket = socket;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#logger = options.logger;
    this.#greeted = new Promise((resolve, reject) => {
      this.#greet = { resolve, reject };
    });
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (err) => {
      this.#lossReason ??= err.message;
      this.#greet?.reject(err);
    });
    socket.on('close', () => this.#closed());
  }

  async spawn(spec: SpawnSpec): Promise<{ pid: number }> {
    const reply = await this.#request((rid) => ({ t: 'spawn', rid, spec }));
    if (reply.t !== 'spawned') throw unexpected(reply);
    return { pid: reply.pid };
  }

  async list(): Promise<PtySessionInfo[]> {
    const reply = await this.#request((rid) => ({ t: 'list', rid }));
    if (reply.t !== 'listed') throw unexpected(reply);
    return reply.sessions;
  }

  write(sessionId: string, data: Uint8Array): void {
    for (let offset = 0; offset < data.byteLength; offset += MAX_BODY_BYTES) {
      this.#send({ t: 'write', sessionId, data: data.subarray(offset, offset + MAX_BODY_BYTES) });
    }
  }

  resize(sessionId: string, cols: number, rows: number): void {
    this.#send({ t: 'resize', sessionId, cols, rows });
  }

  kill(sessionId: string, signal?: string): void {
    this.#send({ t: 'kill', sessionId, signal });
  }

  subscribe(listener: PtyHostListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Ends the connection after flushing queued writes; does not fire onHostLost. */
  async close(): Promise<void> {
    if (this.#socket.closed) return;
    const closed = new Promise((resolve) => this.#socket.once('close', resolve));
    if (!this.#ended) {
      this.#ended = true;
      this.#rejectPending('pty host client closed');
      this.#socket.end();
    }
    const timer = setTimeout(() => this.#socket.destroy(), 1000);
    try {
      await closed;
    } finally {
      clearTimeout(timer);
    }
  }

  #request(build: (rid: number) => Extract<Request, { rid: number }>): Promise<Reply> {
    if (this.#ended) return Promise.reject(new PtyHostError('spawn_failed', this.#endedMessage()));
    const rid = this.#nextRid++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(rid);
        reject(new PtyHostError('spawn_failed', `pty host did not answer within ${this.#requestTimeoutMs} ms`));
      }, this.#requestTimeoutMs);
      this.#pending.set(rid, { resolve, reject, timer });
      this.#send(build(rid));
    });
  }

  #send(msg: Request): void {
    if (this.#ended || !this.#socket.writable) return;
    this.#socket.write(encodeFrame(msg));
  }

  #receive(chunk: Buffer): void {
    this.#decoder.push(chunk);
    try {
      for (let msg = this.#decoder.next(); msg; msg = this.#decoder.next()) this.#dispatch(msg);
    } catch (err) {
      this.#fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  #dispatch(msg: HostMessage): void {
    switch (msg.t) {
      case 'hello':
        if (msg.protocol !== PROTOCOL_VERSION) {
          this.#fail(new Error(`pty host speaks protocol ${msg.protocol}, this router speaks ${PROTOCOL_VERSION}`));
          return;
        }
        this.#greet?.resolve();
        this.#greet = undefined;
        return;
      case 'data':
        this.#notify((l) => l.onData(msg.sessionId, msg.data));
        return;
      case 'exit':
        this.#notify((l) => l.onExit(msg.sessionId, { exitCode: msg.exitCode, signal: msg.signal }));
        return;
      default:
        this.#settle(msg);
    }
  }

  #settle(reply: Reply): void {
    const pending = this.#pending.get(reply.rid);
    if (!pending) return; // already timed out
    this.#pending.delete(reply.rid);
    clearTimeout(pending.timer);
    if (reply.t === 'failed') pending.reject(new PtyHostError(reply.code, reply.message));
    else pending.resolve(reply);
  }

  #notify(call: (listener: PtyHostListener) => void): void {
    for (const listener of [...this.#listeners]) {
      try {
        call(listener);
      } catch (err) {
        if (this.#logger) this.#logger.log('error', 'pty host listener threw', { err });
        else console.error('pty host listener threw', err);
      }
    }
  }

  /** Tears the connection down because it cannot be trusted any more. */
  #fail(err: Error): void {
    this.#lossReason ??= err.message;
    this.#greet?.reject(err);
    this.#socket.destroy();
  }

  #closed(): void {
    this.#greet?.reject(new Error(this.#lossReason ?? 'pty host closed the connection'));
    this.#greet = undefined;
    if (this.#ended) return;
    this.#ended = true;
    const reason = this.#lossReason ?? 'pty host closed the connection';
    this.#rejectPending(`pty host connection lost: ${reason}`);
    this.#notify((l) => l.onHostLost?.(reason));
  }

  #rejectPending(message: string): void {
    for (const { reject, timer } of this.#pending.values()) {
      clearTimeout(timer);
      reject(new PtyHostError('spawn_failed', message));
    }
    this.#pending.clear();
  }

  #endedMessage(): string {
    return this.#lossReason ? `pty host connection lost: ${this.#lossReason}` : 'pty host client closed';
  }
}

function unexpected(reply: Reply): PtyHostError {
  return new PtyHostError('spawn_failed', `unexpected pty host reply '${reply.t}'`);
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

/** How long a stopping host gets between SIGTERM and SIGKILL. */
const STOP_GRACE_MS = 5000;

/** Connects to the host at socketPath, starting one first when nothing listens there. */
export async function ensurePtyHost(options: EnsurePtyHostOptions): Promise<PtyHostHandle> {
  const socketPath = path.resolve(options.socketPath);
  const clientOptions = { ...options.client, logger: options.logger };
  try {
    const host = await PtyHostClient.connect(socketPath, clientOptions);
    options.logger?.log('info', 'using running pty host', { socket: socketPath });
    return { host, stop: () => host.close() };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ECONNREFUSED') throw err;
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
        if (!line.startsWith('pty-host listening ')) return;
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

const LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'] satisfies LogLevel[];

/** Re-logs one of the host's JSON log lines through the router's logger. */
function relayHostLog(log: Logger, line: string): void {
  try {
    const { level, msg, ts: _ts, component: _component, ...fields } = JSON.parse(line) as Record<string, unknown>;
    if (typeof level === 'string' && LEVELS.includes(level) && typeof msg === 'string') {
      log.log(level as LogLevel, msg, fields);
      return;
    }
  } catch {
    // not one of its JSON lines: relayed verbatim below
  }
  log.log('warn', line);
}
