// The PTY host on Deno: the portable connection (pty/client.ts) over Deno.connect's Unix socket,
// and, when nothing listens, the Node PTY host started with Deno.Command (the host owns node-pty
// and stays a Node process).
import { LISTENING_LINE, PtyHostConnection, STOP_GRACE_MS, noHostListening, relayHostLog, type HostSocket, type HostSocketEvents, type PtyHostClientOptions } from '../../../pty/client.ts';
import type { Logger } from '../../ports.ts';
import type { PtyHostLink } from '../../router.ts';

/** Reads below this size are copied out of the read buffer, so a small message does not pin 64 KiB. */
const READ_BYTES = 64 * 1024;

export async function connectPtyHost(socketPath: string, options: PtyHostClientOptions = {}): Promise<PtyHostConnection> {
  const conn = await Deno.connect({ transport: 'unix', path: socketPath });
  return PtyHostConnection.greet(new PtyHostConnection(denoHostSocket(conn), options), socketPath, options.timeoutMs);
}

function denoHostSocket(conn: Deno.UnixConn): HostSocket {
  let state: 'open' | 'ending' | 'closed' = 'open';
  let events: HostSocketEvents | undefined;
  let writes = Promise.resolve();
  const finish = (err?: Error) => {
    if (state === 'closed') return;
    state = 'closed';
    try {
      conn.close();
    } catch {
      // already closed by the runtime
    }
    if (err) events?.error(err);
    events?.close();
  };
  const writeAll = async (bytes: Uint8Array) => {
    for (let off = 0; off < bytes.byteLength; ) off += await conn.write(bytes.subarray(off));
  };
  // Flow control: while paused the read loop waits here, so the host sees a full socket.
  let gate: { wait: Promise<void>; open: () => void } | null = null;
  const readAll = async () => {
    try {
      for (;;) {
        if (gate) await gate.wait;
        const buf = new Uint8Array(READ_BYTES);
        const n = await conn.read(buf);
        if (n === null) break;
        events?.data(n < READ_BYTES / 4 ? buf.slice(0, n) : buf.subarray(0, n));
      }
      finish();
    } catch (e) {
      // Our own close() interrupts the pending read: that is not an error.
      finish(state === 'closed' ? undefined : asError(e));
    }
  };
  return {
    write(bytes) {
      if (state !== 'open') return;
      writes = writes.then(() => writeAll(bytes)).catch((e: unknown) => finish(asError(e)));
    },
    end() {
      if (state !== 'open') return;
      state = 'ending';
      // Half-close once the queue is out: the host closes its side, which ends readAll.
      writes = writes.then(() => conn.closeWrite()).catch(() => finish());
    },
    destroy: () => finish(),
    pause() {
      if (gate) return;
      let open!: () => void;
      const wait = new Promise<void>((resolve) => (open = resolve));
      gate = { wait, open };
    },
    resume() {
      gate?.open();
      gate = null;
    },
    get writable() {
      return state === 'open';
    },
    get closed() {
      return state === 'closed';
    },
    listen(e) {
      events = e;
      void readAll();
    },
  };
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

// ---------------------------------------------------------------- starting a host

export interface EnsurePtyHostOptions {
  socketPath: string;
  logger: Logger;
  /** Extra command-line flags for a host this call starts. */
  hostFlags?: readonly string[];
  /** How long a started host may take to print its listening line. Default 15 s. */
  startTimeoutMs?: number;
}

/** Connects to the host at socketPath, starting one first when nothing listens there. */
export async function ensurePtyHost(options: EnsurePtyHostOptions): Promise<PtyHostLink> {
  const { socketPath, logger } = options;
  try {
    const host = await connectPtyHost(socketPath, { logger });
    logger.log('info', 'using running pty host', { socket: socketPath });
    return { host, backends: host.backends, confinement: host.confinement, startedHere: () => false, pid: () => host.hostPid, close: () => host.close(), stop: () => host.close() };
  } catch (err) {
    if (!noHostListening(err)) throw err;
  }
  const started = await startHostProcess(options);
  try {
    const host = await connectPtyHost(socketPath, { logger });
    return {
      host,
      backends: host.backends,
      confinement: host.confinement,
      startedHere: () => true,
      pid: () => host.hostPid,
      close: () => host.close(),
      stop: async () => {
        await host.close();
        await started.stop();
      },
    };
  } catch (err) {
    await started.stop();
    throw err;
  }
}

interface HostProcess {
  child: Deno.ChildProcess;
  stop(): Promise<void>;
}

async function startHostProcess({ socketPath, logger, hostFlags = [], startTimeoutMs = 15_000 }: EnsurePtyHostOptions): Promise<HostProcess> {
  const root = decodeURIComponent(new URL('../../../', import.meta.url).pathname);
  const log = logger.child({ component: 'pty-host' });
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command('node', {
      args: ['--import', 'tsx', `${root}pty/main.ts`, '--socket', socketPath, ...hostFlags],
      // `--import tsx` resolves from the cwd, so run where this package's node_modules are.
      cwd: root,
      stdin: 'null',
      stdout: 'piped',
      stderr: 'piped',
      // Its own session: a Ctrl-C meant for the router must not kill the sessions before the
      // router has shut down in order (the router stops the host itself).
      detached: true,
    }).spawn();
  } catch (e) {
    throw new Error(`pty host could not be started: ${asError(e).message}`, { cause: e });
  }
  let exited = false;
  const status = child.status.finally(() => {
    exited = true;
  });
  const signal = (sig: Deno.Signal) => {
    try {
      child.kill(sig);
    } catch {
      // it exited in the meantime
    }
  };
  const stop = async () => {
    if (exited) return;
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), STOP_GRACE_MS);
    try {
      await status;
    } finally {
      clearTimeout(timer);
    }
  };

  const stderrTail: string[] = [];
  const stderrRead = eachLine(child.stderr, (line) => {
    stderrTail.push(line);
    if (stderrTail.length > 20) stderrTail.shift();
    relayHostLog(log, line);
  });
  let listening!: () => void;
  const heard = new Promise<void>((resolve) => {
    listening = resolve;
  });
  // Read to the end (the host's stdout must never fill up), resolving at the listening line.
  void eachLine(child.stdout, (line) => {
    if (line.startsWith(LISTENING_LINE)) listening();
  });

  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    heard.then(() => null),
    new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`did not start listening within ${startTimeoutMs} ms`), startTimeoutMs);
    }),
    // Once its stderr is read to the end, so the lines explaining the death are in the tail.
    Promise.all([status, stderrRead]).then(([s]) => `exited before listening (code ${s.code}, signal ${s.signal})`),
  ]);
  clearTimeout(timer);
  if (outcome !== null) {
    await stop();
    throw new Error(`pty host ${outcome}${stderrTail.length ? `; its stderr:\n${stderrTail.join('\n')}` : ''}`);
  }
  log.log('info', 'started pty host', { pid: child.pid, socket: socketPath });
  return { child, stop };
}

/** Calls onLine for every line of the stream until it ends; a broken stream just ends it. */
async function eachLine(stream: ReadableStream<Uint8Array<ArrayBuffer>>, onLine: (line: string) => void): Promise<void> {
  let rest = '';
  try {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      const lines = (rest + text).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    }
  } catch {
    // the pipe broke with the process: what was read is all there is
  }
  if (rest) onLine(rest);
}
