// The PtyHost the router uses, on every runtime: one connection to the PTY host at a time, and
// when it is lost, reconnecting (starting a new host if none listens) until it is back. The
// listeners hear onHostLost, then onHostRestored once a host answers again.

import { PtyHostError } from '../../pty/wire/protocol.ts';
import type { HostResume, PtyHost, PtyHostListener, PtySessionInfo, SpawnSpec } from '../ports/pty-host.ts';
import type { Logger } from '../ports/logger.ts';
import type { ConfinementReport } from '../core/session-confinement.ts';
import { ensurePtyHost, type EnsurePtyHostOptions, type PtyHostHandle, type PtyHostRuntime } from './launcher.ts';

/** The connection to the PTY host, as the runtime made it. */
export interface PtyHostLink {
  host: PtyHost;
  /** The backends the host reported it runs: exactly what binding_hello advertises. */
  backends: readonly string[];
  /** How the host said it confines sessions (undefined: a host too old to say, unconfined). */
  confinement: ConfinementReport | undefined;
  /** The connected host was started by this router. */
  startedHere(): boolean;
  /** The connected host is this state dir's (started here, or by an earlier router on it): it may stop with the router (see Router.stop). */
  owned(): boolean;
  /** The connected host's pid, or null while none is connected. */
  pid(): number | null;
  /** Closes the connection and leaves the host running. */
  close(): Promise<void>;
  /** Closes the connection and, when owned, stops the host. */
  stop(): Promise<void>;
}

export interface SupervisedPtyHostOptions {
  runtime: PtyHostRuntime;
  socketPath: string;
  logger: Logger;
  /** What a host this router starts is told: see EnsurePtyHostOptions.settings. */
  settings?: EnsurePtyHostOptions['settings'];
  /** The router's state directory (absolute): see EnsurePtyHostOptions.stateDir. */
  stateDir?: string;
  /** Waits before each reconnection attempt; the last one repeats. */
  retryDelaysMs?: readonly number[];
}

const RETRY_DELAYS_MS = [100, 250, 500, 1000, 2000];

export class SupervisedPtyHost implements PtyHost {
  readonly #options: SupervisedPtyHostOptions;
  readonly #listeners = new Set<PtyHostListener>();
  #handle: PtyHostHandle | null = null;
  #closed = false;
  #eventsPaused = false;

  /** Connects to the host on the socket (starting one when none listens). */
  static async start(options: SupervisedPtyHostOptions): Promise<SupervisedPtyHost> {
    const supervised = new SupervisedPtyHost(options);
    supervised.#attach(await supervised.#ensure());
    return supervised;
  }

  private constructor(options: SupervisedPtyHostOptions) {
    this.#options = options;
  }

  /** How the connected host confines sessions, as it said in its greeting. */
  get confinement(): ConfinementReport | undefined {
    return this.#handle?.host.confinement;
  }

  /** The backends the connected host runs (empty while none is connected). */
  get backends(): readonly string[] {
    return this.#handle?.host.backends ?? [];
  }

  /** The connected host's pid, or null while none is connected. */
  get hostPid(): number | null {
    return this.#handle?.host.hostPid ?? null;
  }

  /** True when the connected host is a process this router started. */
  get startedHost(): boolean {
    return this.#handle?.child !== undefined;
  }

  /** True when the connected host is this state dir's (started here or by an earlier router on it). */
  get ownedHost(): boolean {
    return this.#handle?.owned ?? false;
  }

  spawn(spec: SpawnSpec): Promise<{ pid: number }> {
    return this.#client()?.spawn(spec) ?? Promise.reject(unreachable());
  }

  list(): Promise<PtySessionInfo[]> {
    return this.#client()?.list() ?? Promise.reject(unreachable());
  }

  write(sessionId: string, data: Uint8Array, onFailed?: (message: string) => void): void {
    const client = this.#client();
    if (client) client.write(sessionId, data, onFailed);
    else onFailed?.('the PTY host is unreachable right now (reconnecting)');
  }

  resize(sessionId: string, cols: number, rows: number, done?: (error?: string) => void): void {
    const client = this.#client();
    if (client) client.resize(sessionId, cols, rows, done);
    else done?.(unreachable().message);
  }

  kill(sessionId: string, signal?: string): void {
    this.#client()?.kill(sessionId, signal);
  }

  subscribe(listener: PtyHostListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  startEvents(resume?: HostResume, credit?: boolean): void {
    this.#client()?.startEvents(resume, credit);
  }

  ack(sessionId: string, n: number): void {
    this.#client()?.ack(sessionId, n);
  }

  get epoch(): string | null {
    return this.#client()?.epoch ?? null;
  }

  pauseEvents(): void {
    this.#eventsPaused = true;
    this.#client()?.pauseEvents();
  }

  resumeEvents(): void {
    this.#eventsPaused = false;
    this.#client()?.resumeEvents();
  }

  /** Credit goes to the host connected now: a new one counts from nothing (credit-loop.ts). */
  credit(sessionId: string, bytes: number): void {
    this.#client()?.credit(sessionId, bytes);
  }

  /** Disconnects and stops reconnecting; the host keeps running. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#handle?.release();
  }

  /** Disconnects and stops the host if it is this state dir's; otherwise like close(). */
  async stop(): Promise<void> {
    this.#closed = true;
    await this.#handle?.stop();
  }

  #client() {
    return this.#closed ? undefined : this.#handle?.host;
  }

  #ensure(): Promise<PtyHostHandle> {
    const { runtime, socketPath, logger, settings, stateDir } = this.#options;
    return ensurePtyHost(runtime, { socketPath, logger, settings, stateDir });
  }

  #attach(handle: PtyHostHandle): void {
    this.#handle = handle;
    handle.host.subscribe({
      onData: (id, data, n) => this.#notify((l) => l.onData(id, data, n)),
      onExit: (id, exit, n) => this.#notify((l) => l.onExit(id, exit, n)),
      onHostLost: (reason) => this.#lost(handle, reason),
    });
    if (this.#eventsPaused) handle.host.pauseEvents();
  }

  #lost(handle: PtyHostHandle, reason: string): void {
    if (this.#handle !== handle || this.#closed) return;
    this.#handle = null;
    this.#options.logger.log('error', 'PTY host connection lost; reconnecting', { reason });
    this.#notify((l) => l.onHostLost?.(reason));
    void this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    const delays = this.#options.retryDelaysMs ?? RETRY_DELAYS_MS;
    for (let attempt = 0; !this.#closed; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, delays[Math.min(attempt, delays.length - 1)]));
      if (this.#closed) return;
      let handle: PtyHostHandle;
      try {
        handle = await this.#ensure();
      } catch (err) {
        this.#options.logger.log('warn', 'PTY host still unreachable', { attempt: attempt + 1, error: err });
        continue;
      }
      if (this.#closed) {
        await handle.release();
        return;
      }
      this.#attach(handle);
      this.#options.logger.log('info', 'PTY host reachable again', { pid: handle.host.hostPid, started: handle.child !== undefined });
      this.#notify((l) => l.onHostRestored?.());
      return;
    }
  }

  #notify(call: (listener: PtyHostListener) => void): void {
    for (const listener of [...this.#listeners]) {
      try {
        call(listener);
      } catch (err) {
        this.#options.logger.log('error', 'pty host listener threw', { err });
      }
    }
  }
}

/** The router's link to a supervised host; `decorate` wraps the port the hub talks to (tests). */
export async function supervisedPtyHostLink(options: SupervisedPtyHostOptions, decorate?: (host: PtyHost) => PtyHost): Promise<PtyHostLink> {
  const supervised = await SupervisedPtyHost.start(options);
  return {
    host: decorate?.(supervised) ?? supervised,
    backends: supervised.backends,
    confinement: supervised.confinement,
    startedHere: () => supervised.startedHost,
    owned: () => supervised.ownedHost,
    pid: () => supervised.hostPid,
    close: () => supervised.close(),
    stop: () => supervised.stop(),
  };
}

function unreachable(): PtyHostError {
  return new PtyHostError('spawn_failed', 'the PTY host is unreachable right now (reconnecting); try again shortly');
}
