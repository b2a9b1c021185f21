// Starts the real router (which starts the real PTY host) as child processes in a temp dir.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;

export interface BenchServer {
  origin: string;
  token: string;
  dir: string;
  router: ChildProcess;
  attachUrl(sessionId: string): string;
  createSession(body: Record<string, unknown>): Promise<string>;
  getSession(id: string): Promise<Record<string, unknown>>;
  /** DELETE of the session (its process is ended); errors are ignored: this is clean-up. */
  deleteSession(id: string): Promise<void>;
  /** Resident set size in bytes of the router and of the PTY host. */
  rss(): { router: number; host: number };
  /** The PTY host the router started (null when it cannot be found). */
  hostPid(): number | null;
  stop(): Promise<void>;
}

export async function startBenchServer(env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-bench-'));
  const router = spawn(process.execPath, [...nodeArgs, BIN, 'start', '--port', '0', '--state-dir', dir, '--log-level', 'warn'], {
    env: { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  router.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  router.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const hostPid = (): number | null => {
    try {
      // Any of the router's threads may have spawned it: each task lists its own children.
      const children = readdirSync(`/proc/${router.pid}/task`).flatMap((t) => readFileSync(`/proc/${router.pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
      return children.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('src/adapter/node/pty-host-main.ts')) ?? null;
    } catch {
      return null;
    }
  };
  // From the sources (tsx compiles them at start) on a loaded machine, a start can take tens of seconds.
  const deadline = Date.now() + 90_000;
  while (!/dev token:\s+(\S+)/.test(out)) {
    if (Date.now() > deadline || router.exitCode !== null) {
      // A PTY host outlives its router by design: a start given up on ends both.
      const host = hostPid();
      if (host) process.kill(host, 'SIGKILL');
      router.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`router did not start in 90 s: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const origin = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  const token = /dev token:\s+(\S+)/.exec(out)![1]!;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const rssOf = (pid: number | null | undefined): number => {
    if (!pid) return NaN;
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  };
  return {
    origin,
    token,
    dir,
    router,
    attachUrl: (id) => `${origin.replace(/^http/, 'ws')}/agents/local/sessions/${id}/attach`,
    async createSession(body) {
      const res = await fetch(`${origin}/agents/local/sessions`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`create session: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { session_id: string }).session_id;
    },
    async getSession(id) {
      return (await (await fetch(`${origin}/agents/local/sessions/${id}`, { headers })).json()) as Record<string, unknown>;
    },
    async deleteSession(id) {
      await fetch(`${origin}/agents/local/sessions/${id}`, { method: 'DELETE', headers }).then((r) => r.body?.cancel(), () => undefined);
    },
    rss: () => ({ router: rssOf(router.pid), host: rssOf(hostPid()) }),
    hostPid,
    async stop() {
      const exited = new Promise((r) => router.once('exit', r));
      router.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (router.exitCode === null) router.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
