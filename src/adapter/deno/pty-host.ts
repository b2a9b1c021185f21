// The PTY host's runtime calls on Deno (the logic, supervision included: src/host-link/): the
// portable connection (src/host-link/client.ts) over Deno.connect's Unix socket, and the Node PTY host
// started with Deno.Command (the host owns node-pty and stays a Node process).
import { PtyHostConnection, type HostSocket, type HostSocketEvents, type PtyHostClientOptions } from '../../host-link/client.ts';
import type { PtyHostRuntime } from '../../host-link/launcher.ts';
import { LINK_READ_BYTES } from '../../core/flow-budget.ts';
import { hostSocketProblem } from '../../services/private-files.ts';
import { denoFileFacts } from './file-facts.ts';


/** Rejects, before connecting, when the socket or its directory could be another user's (see hostSocketProblem). */
export async function connectPtyHost(socketPath: string, options: PtyHostClientOptions = {}): Promise<PtyHostConnection> {
  const problem = hostSocketProblem(socketPath, denoFileFacts);
  if (problem) throw new Error(problem);
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
    // One buffer for every read, sized with the host's largest frame (src/core/flow-budget.ts) so most
    // frames arrive whole: the client copies what it keeps (HostSocketEvents.data).
    const buf = new Uint8Array(LINK_READ_BYTES);
    try {
      for (;;) {
        if (gate) await gate.wait;
        const n = await conn.read(buf);
        if (n === null) break;
        events?.data(buf.subarray(0, n));
      }
      finish();
    } catch (e) {
      // Our own close() interrupts the pending read: that is not an error.
      finish(state === 'closed' ? undefined : asError(e));
    }
  };
  return {
    write(bytes, written) {
      if (state !== 'open') return written?.();
      writes = writes
        .then(() => writeAll(bytes))
        .catch((e: unknown) => finish(asError(e)))
        .finally(() => written?.());
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

export const denoPtyHostRuntime: PtyHostRuntime<Deno.ChildProcess> = {
  connect: connectPtyHost,
  environment: () => Deno.env.toObject(),
  spawnHost({ args, env, stdout, stderr }) {
    const root = decodeURIComponent(new URL('../../../', import.meta.url).pathname);
    const child = new Deno.Command('node', {
      args: ['--import', 'tsx', `${root}src/adapter/node/pty-host-main.ts`, ...args],
      // `--import tsx` resolves from the cwd, so run where this package's node_modules are.
      cwd: root,
      env,
      clearEnv: true,
      stdin: 'null',
      stdout: 'piped',
      stderr: 'piped',
      detached: true,
    }).spawn();
    let done = false;
    // Read both to the end (a full pipe would stall the host); exited once stderr is read too.
    void eachLine(child.stdout, stdout);
    const stderrRead = eachLine(child.stderr, stderr);
    const exited = Promise.all([child.status, stderrRead]).then(([s]) => {
      done = true;
      return { code: s.code, signal: s.signal };
    });
    return {
      child,
      pid: child.pid,
      exited,
      get done() {
        return done;
      },
      kill(signal) {
        try {
          child.kill(signal);
        } catch {
          // it exited in the meantime
        }
      },
      release: () => child.unref(),
    };
  },
};

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
