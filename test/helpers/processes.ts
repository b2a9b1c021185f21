// pty-ws as separate processes, the way an operator runs it: `pty-ws pty-host` and `pty-ws serve`
// as children of the test, so they can be SIGKILLed and restarted.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createServer } from 'node:net';
import { until } from './wait.ts';

export const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;

export interface Child {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Ends it (SIGTERM, then SIGKILL after graceMs) and waits; a no-op once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Runs `node bin/pty-ws.js ...args` with a minimal environment plus `env`. */
export function runCli(args: string[], env: Record<string, string>, options: Pick<SpawnOptions, 'uid' | 'gid'> = {}): Child {
  const proc = spawn(process.execPath, [BIN, ...args], {
    // per-start: a router restarted on the same state dir prints a "dev token:" line again (the kept
    // token: test/security/dev-token.test.ts). A native default session ends with its router (the tmux one:
    // test/sessions/default-session.test.ts).
    env: { PATH: process.env.PATH, SHELL: '/bin/sh', PTY_WS_DEV_TOKEN_POLICY: 'per-start', PTY_WS_DEFAULT_SESSION_BACKEND: 'native', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const stop = async (graceMs = 5000): Promise<void> => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return { proc, stdout: () => out, stderr: () => err, exited, stop };
}


/** A standalone PTY host on `socket`, up once it prints its listening line. */
export async function startPtyHostProcess(socket: string, env: Record<string, string> = {}): Promise<Child> {
  const host = runCli(['pty-host', '--socket', socket], env);
  await until(() => host.stdout().includes('pty-host listening ') || host.proc.exitCode !== null, 'the pty host to listen');
  if (host.proc.exitCode !== null) throw new Error(`pty host exited: ${host.stderr()}`);
  return host;
}

export interface RouterProcess extends Child {
  origin: string;
  wsOrigin: string;
  token: string;
  attachUrl(sessionId: string): string;
  createSession(body: Record<string, unknown>): Promise<{ session_id: string }>;
}

/** `pty-ws serve --port 0` with the given flags, up once it prints its banner. */
export async function startRouterProcess(flags: Record<string, string>, env: Record<string, string> = {}): Promise<RouterProcess> {
  const args = ['serve', '--port', '0', ...Object.entries(flags).flatMap(([k, v]) => [`--${k}`, v])];
  const child = runCli(args, env);
  // A router starts through tsx in a new Node process: slow on a loaded machine.
  const origin = await until(() => /listening on (http:\/\/\S+)/.exec(child.stdout())?.[1] ?? (child.proc.exitCode !== null ? 'exited' : undefined), 'the router banner', 60_000);
  if (origin === 'exited') throw new Error(`router exited: ${child.stderr()}`);
  const token = await until(() => /dev token:\s+(\S+)/.exec(child.stdout())?.[1], 'the dev token');
  const wsOrigin = origin.replace(/^http/, 'ws');
  return {
    ...child,
    origin,
    wsOrigin,
    token,
    attachUrl: (id) => `${wsOrigin}/agents/local/sessions/${id}/attach`,
    async createSession(body) {
      const res = await fetch(`${origin}/agents/local/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`create session: HTTP ${res.status} ${await res.text()}`);
      return (await res.json()) as { session_id: string };
    },
  };
}

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
export { until };
