// Reaching a PTY host, written once for every runtime: connect to the one listening on the
// socket, or start one as a child process when nothing listens there, wait for its listening
// line, relay its log, and stop it (SIGTERM, SIGKILL after a grace) or let it run on. The runtime
// supplies only the calls: connect a socket, spawn a process (PtyHostRuntime).
import { LISTENING_LINE, STOP_GRACE_MS, noHostListening, relayHostLog, type PtyHostClientOptions, type PtyHostConnection } from './client.ts';
import { ptyHostArgs, type PtyHostLaunch } from '../../pty/wire/host-config.ts';
import type { Logger } from '../ports/logger.ts';
import { hostEnvironment } from './environment.ts';

/** A host process as the runtime started it. */
export interface SpawnedHost<Child> {
  /** The runtime's own handle (a Node ChildProcess, a Deno.ChildProcess). */
  child: Child;
  pid: number | undefined;
  /** Resolves once it exited and its stderr was read to the end. */
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** True once it exited. */
  readonly done: boolean;
  kill(signal: 'SIGTERM' | 'SIGKILL'): void;
  /** Lets it run on after this process: nothing of it keeps this event loop alive. */
  release(): void;
}

export interface PtyHostRuntime<Child = unknown> {
  /** Connects to the host's socket and waits for its greeting; rejects with the socket error (ENOENT, ECONNREFUSED, ...). */
  connect(socketPath: string, options: PtyHostClientOptions): Promise<PtyHostConnection>;
  /**
   * Starts the host process with `args` (ptyHostArgs) and exactly `env`, in its own process group
   * (a Ctrl-C meant for the router must not reach the sessions before the router has shut down
   * in order), calling back with every line it prints. Throws when it cannot be started.
   */
  spawnHost(o: { args: readonly string[]; env: Record<string, string>; stdout(line: string): void; stderr(line: string): void }): SpawnedHost<Child>;
  /** The router's environment, which the host inherits without the router's own settings. */
  environment(): Readonly<Record<string, string | undefined>>;
}

export interface EnsurePtyHostOptions {
  socketPath: string;
  /** Receives the host's log lines (re-logged with their level) and start-up events. */
  logger?: Logger;
  /** What a host this call starts is told besides its socket and stateDir (default: info, unconfined). */
  settings?: Pick<PtyHostLaunch, 'logLevel' | 'confinement'>;
  /**
   * The router's state directory (absolute). A host this call starts is told it (`--started-by`);
   * a running host that names it was started by a router on this state dir, so it is this
   * router's to stop too (`PtyHostHandle.owned`).
   */
  stateDir?: string;
  /** How long a started host may take to print its listening line. Default 15 s. */
  startTimeoutMs?: number;
  client?: Omit<PtyHostClientOptions, 'logger'>;
}

export interface PtyHostHandle<Child = unknown> {
  host: PtyHostConnection;
  /** Present when this call started the host process. */
  child?: Child;
  /** The host is this state dir's: this call started it, or a router on the same state dir did. */
  owned: boolean;
  /** Closes the client and, if the host is owned, stops it. */
  stop(): Promise<void>;
  /** Closes the client and leaves a host this call started running on its own. */
  release(): Promise<void>;
}

const DEFAULT_SETTINGS: Pick<PtyHostLaunch, 'logLevel' | 'confinement'> = { logLevel: 'info', confinement: { user: undefined, sandbox: 'none', network: 'host', hide: [] } };

/** Connects to the host at socketPath, starting one first when nothing listens there. */
export async function ensurePtyHost<Child>(runtime: PtyHostRuntime<Child>, options: EnsurePtyHostOptions): Promise<PtyHostHandle<Child>> {
  const { socketPath } = options;
  const clientOptions = { ...options.client, logger: options.logger };
  try {
    const host = await runtime.connect(socketPath, clientOptions);
    // Started by an earlier router on this state dir (which left it for its multiplexer sessions):
    // ours to stop like one we started. One started on its own, or for another state dir, is not.
    const owned = options.stateDir !== undefined && host.startedBy === options.stateDir;
    options.logger?.log('info', 'using running pty host', { socket: socketPath, pid: host.hostPid, owned });
    return { host, owned, stop: owned ? () => stopAdopted(host, options.logger) : () => host.close(), release: () => host.close() };
  } catch (err) {
    if (!noHostListening(err)) throw err;
  }
  const started = await startHost(runtime, options);
  try {
    const host = await runtime.connect(socketPath, clientOptions);
    return {
      host,
      child: started.child,
      owned: true,
      stop: async () => {
        await host.close();
        await stopHost(started);
      },
      release: async () => {
        await host.close();
        started.release();
      },
    };
  } catch (err) {
    await stopHost(started);
    throw err;
  }
}

async function startHost<Child>(runtime: PtyHostRuntime<Child>, options: EnsurePtyHostOptions): Promise<SpawnedHost<Child>> {
  const { socketPath, startTimeoutMs = 15_000 } = options;
  const log = options.logger?.child({ component: 'pty-host' });
  const stderrTail: string[] = [];
  let listening!: () => void;
  const heard = new Promise<void>((resolve) => (listening = resolve));
  let spawned: SpawnedHost<Child>;
  try {
    spawned = runtime.spawnHost({
      args: ptyHostArgs({ socketPath, startedBy: options.stateDir, ...(options.settings ?? DEFAULT_SETTINGS) }),
      env: hostEnvironment(runtime.environment()),
      stdout: (line) => {
        if (line.startsWith(LISTENING_LINE)) listening();
      },
      stderr: (line) => {
        stderrTail.push(line);
        if (stderrTail.length > 20) stderrTail.shift();
        if (log) relayHostLog(log, line);
      },
    });
  } catch (e) {
    throw new Error(`pty host could not be started: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    heard.then(() => null),
    new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`did not start listening within ${startTimeoutMs} ms`), startTimeoutMs))),
    spawned.exited.then((s) => `exited before listening (code ${s.code}, signal ${s.signal})`),
  ]);
  clearTimeout(timer);
  if (outcome !== null) {
    await stopHost(spawned);
    throw new Error(`pty host ${outcome}${stderrTail.length ? `; its stderr:\n${stderrTail.join('\n')}` : ''}`);
  }
  log?.log('info', 'started pty host', { pid: spawned.pid, socket: socketPath });
  return spawned;
}

/** A host we did not start has no child handle to signal: it is asked over its socket. */
async function stopAdopted(host: PtyHostConnection, logger: Logger | undefined): Promise<void> {
  const pid = host.hostPid;
  if (await host.shutdown()) logger?.log('info', 'stopped the pty host an earlier router on this state dir started', { pid });
  else logger?.log('warn', 'the pty host an earlier router on this state dir started did not stop when asked; it runs on', { pid });
}

/** SIGTERM, then SIGKILL after the grace the host's own shutdown needs. */
async function stopHost(spawned: SpawnedHost<unknown>): Promise<void> {
  if (spawned.done) return;
  spawned.kill('SIGTERM');
  const timer = setTimeout(() => spawned.kill('SIGKILL'), STOP_GRACE_MS);
  try {
    await spawned.exited;
  } finally {
    clearTimeout(timer);
  }
}
