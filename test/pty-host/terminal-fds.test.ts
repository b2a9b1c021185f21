// node-pty 1.1.0 leaves every PTY master inheritable (microsoft/node-pty#657): a native session's
// shell held the terminal of every session started before it. Driven through the real router, PTY
// host and shells: what session 2's shell holds, and how session 1 ends while session 2 runs.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { muxPaths } from '../../pty/backends/paths.ts';
import { isAlive } from '../../pty/backends/process-tree.ts';
import { b64, TestClient } from '../helpers/client.ts';
import { startTestServer, stopWithMultiplexers, type TestServer } from '../helpers/server.ts';

let server: TestServer;
const clients: TestClient[] = [];
const leftovers: number[] = [];

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  for (const pid of leftovers) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  // Its tmux and screen sessions keep the PTY host (and their servers) alive past a plain stop().
  if (server) await stopWithMultiplexers(server);
});

/** A /bin/sh session (native unless said) joined as controller. */
async function shell(backend?: 'tmux' | 'screen'): Promise<{ id: string; c: TestClient; run(line: string, end: string): Promise<string> }> {
  const { session_id: id } = await server.createSession(backend ? { command: '/bin/sh', session_backend: backend, session_class: 'managed' } : { command: '/bin/sh' });
  const c = await TestClient.connect(server.attachUrl(id), { token: server.devToken });
  clients.push(c);
  await c.join();
  let marks = 0;
  return {
    id,
    c,
    // The mark is printed in two halves so the echoed command line never matches it.
    async run(line, end) {
      const mark = `${end}-${++marks}`;
      const from = c.output().length;
      c.send('pty.session_input', { data: b64(`${line}; echo ${mark.slice(0, 3)}""${mark.slice(3)}\r`) });
      await c.waitFor(() => c.output().slice(from).includes(`${mark}\r\n`) || undefined, mark);
      return c.output().slice(from);
    },
  };
}

describe('terminal descriptors between native sessions', () => {
  it("session 2's shell holds no PTY master and nothing of session 1's terminal", async () => {
    const one = await shell();
    const tty1 = /\/dev\/pts\/\d+/.exec(await one.run('tty', 'TTY'))?.[0];
    expect(tty1).toBeDefined();
    const two = await shell();
    const tty2 = /\/dev\/pts\/\d+/.exec(await two.run('tty', 'TTY'))?.[0];
    expect(tty2).not.toBe(tty1);

    const targets = [...(await two.run('ls -l /proc/$$/fd', 'FDS')).matchAll(/ -> (\S+)/g)].map((m) => m[1]!);
    expect(targets).toContain(tty2);
    expect(targets.filter((t) => t === '/dev/ptmx' || t === '/dev/pts/ptmx' || t === tty1)).toEqual([]);
    // Nor anything else of the host's: only the terminal itself (and the shell's own /dev/tty).
    expect(targets.filter((t) => t !== tty2 && t !== '/dev/tty')).toEqual([]);
  });

  // tmux and screen close inherited descriptors before running a pane's program themselves (this
  // passes without our fix too): the evidence for what docs/security.md says of them.
  for (const backend of ['tmux', 'screen'] as const) {
    it(`a ${backend} session's shell started after a native session holds no PTY master`, async () => {
      await (await shell()).run('true', 'UP');
      const mux = await shell(backend);
      const targets = [...(await mux.run('ls -l /proc/$$/fd', 'FDS')).matchAll(/ -> (\S+)/g)].map((m) => m[1]!);
      expect(targets.length).toBeGreaterThan(0);
      expect(targets.filter((t) => t === '/dev/ptmx' || t === '/dev/pts/ptmx')).toEqual([]);
    });
  }

  // A multiplexer server outlives the host: holding a native session's PTY master, it kept that
  // session's program running after a PTY host crash (while REST said it had died).
  it("the tmux and screen servers hold no native session's PTY master", async () => {
    const native = /\/dev\/pts\/(\d+)/.exec(await (await shell()).run('tty', 'TTY'))?.[1];
    expect(native).toBeDefined();
    await (await shell('tmux')).run('true', 'UP');
    await (await shell('screen')).run('true', 'UP');
    const paths = muxPaths(server.config.ptySocket);
    const tmux = execFileSync('tmux', ['-S', paths.tmuxSocket, 'display-message', '-p', '#{pid}'], { encoding: 'utf8' }).trim();
    const screens = readdirSync(paths.screenDir).map((f) => /^(\d+)\./.exec(f)?.[1]).filter((p): p is string => p !== undefined);
    expect(screens.length).toBeGreaterThan(0);
    for (const pid of [tmux, ...screens]) {
      // A server holds the masters of its own panes; each master names its terminal (tty-index).
      const masters = readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
        try {
          if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== '/dev/ptmx') return [];
          return [/tty-index:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))?.[1]];
        } catch {
          return [];
        }
      });
      expect(masters, `server ${pid}`).not.toContain(native);
    }
  });

  // Retried: about one run in five (old code too) the typed `exit` is never echoed nor run, and no
  // Closed comes (the left-behind reader reads the same terminal; not yet explained, see the
  // issue 17 note). The leak this test is for fails every run, so retries keep it able to fail.
  it("session 1's terminal hangs up when session 1 ends, while session 2 runs", { retry: 2 }, async () => {
    const one = await shell();
    // A reader left behind that ignores SIGHUP (no job control, so it may read the terminal): it
    // ends when its read fails, once the last descriptor of the terminal's master is closed.
    const pid = Number(/PID=(\d+)/.exec(await one.run("set +m; (trap '' HUP; exec cat </dev/tty >/dev/null) & echo PID=$!", 'BG'))?.[1]);
    expect(isAlive(pid)).toBe(true);
    leftovers.push(pid);
    const two = await shell();
    await two.run('true', 'UP');

    const t0 = Date.now();
    one.c.send('pty.session_input', { data: b64('exit\r') });
    await one.c.waitForFrame((f) => f.op === 'pty.session_frame' && f.payload.kind === 'Closed', 'Closed', 15_000);
    const closedMs = Date.now() - t0;
    expect(await until(() => !isAlive(pid), 5000), `the reader of session 1 still runs ${Date.now() - t0} ms after its shell exited (Closed after ${closedMs} ms)`).toBe(true);
  });
});

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (check()) return true;
  return check();
}
