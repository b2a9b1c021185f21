// Confinement that holds (docs/security.md, "Session confinement"): the escapes an attacker tried
// against a confined server, tried again with real parts. A session's variables must never reach
// a tool that runs as root (a real LD_PRELOAD library records the uid of every process it is
// loaded into), the sandbox must not run sessions as root, and what the service keeps (secret
// files, the multiplexers' directory, its own code, the system) stays out of reach or read-only.
// Runs as root with bubblewrap and a C compiler (CI has all three); elsewhere skipped, saying why.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { muxPaths } from '../../pty/backends/paths.ts';
import { SEALED } from '../../pty/backends/session-launch.ts';
import { TestClient } from '../helpers/client.ts';
import { startTestServer, stopWithMultiplexers, type TestServer } from '../helpers/server.ts';
import { ask, ensureSessionUser, processes, SESSION_USER, SESSION_USER_HOME } from '../helpers/session-user.ts';
import { signJwt } from '../helpers/tokens.ts';

const SECRET = 'escape-test-secret-0123456789-abcdefghijklmn';
const isRoot = process.getuid?.() === 0;
const hasBwrap = existsSync('/usr/bin/bwrap');
const cc = ['/usr/bin/cc', '/usr/bin/gcc'].find((p) => existsSync(p));
const BACKENDS = ['native', 'tmux', 'screen'] as const;
const why = [!isRoot && 'needs root (a session user)', !hasBwrap && 'needs bwrap (Debian bubblewrap)', !cc && 'needs a C compiler (the preload library)'].filter(Boolean).join('; ');

describe.skipIf(why !== '')(`confinement that holds${why ? ` (${why})` : ''}`, () => {
  let work: string;
  let preload: string;
  let preloadLog: string;
  let token: string;
  let secretFile: string;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    ensureSessionUser();
    work = mkdtempSync(path.join(tmpdir(), 'pty-ws-escape-'));
    chmodSync(work, 0o755);
    // A constructor that appends "<uid> <euid>" for every process the library is loaded into.
    preloadLog = path.join(work, 'preload.log');
    writeFileSync(preloadLog, '');
    chmodSync(preloadLog, 0o666);
    const source = path.join(work, 'p.c');
    writeFileSync(
      source,
      `#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
  char line[64];
  int fd = open(${JSON.stringify(preloadLog)}, O_WRONLY | O_APPEND);
  if (fd < 0) return;
  int n = snprintf(line, sizeof line, "%d %d\\n", (int)getuid(), (int)geteuid());
  if (n > 0) write(fd, line, (size_t)n);
  close(fd);
}
`,
    );
    preload = path.join(work, 'p.so');
    execFileSync(cc!, ['-shared', '-fPIC', '-o', preload, source]);
    chmodSync(preload, 0o755);
    // The library works: loaded into a program of ours, it records our uid.
    execFileSync('/bin/true', { env: { LD_PRELOAD: preload } });
    expect(readFileSync(preloadLog, 'utf8')).toBe('0 0\n');
    writeFileSync(preloadLog, '');
    // A JWT secret file outside the state dir, in a directory anyone may look into (a layout
    // docs/deployment.md shows).
    const secrets = path.join(work, 'secrets');
    mkdirSync(secrets, { mode: 0o755 });
    chmodSync(secrets, 0o755);
    secretFile = path.join(secrets, 'jwt-secret');
    writeFileSync(secretFile, SECRET, { mode: 0o600 });
    token = await signJwt({ sub: 'mallory', scope: 'pty:control' }, new TextEncoder().encode(SECRET));
  });

  afterAll(async () => {
    for (const s of servers) await stopWithMultiplexers(s);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  async function serverWith(env: Record<string, string>, dir?: string): Promise<TestServer> {
    const s = await startTestServer({ HOME: SESSION_USER_HOME, PTY_WS_JWT_SECRET_FILE: secretFile, ...env }, {}, dir ? { dir } : {});
    servers.push(s);
    return s;
  }

  async function controller(server: TestServer, body: Record<string, unknown>): Promise<TestClient> {
    const s = await server.createSession(body, token);
    const c = await TestClient.connect(s.attach_url, { token });
    const frames = await c.join({ role: 'controller' });
    expect(frames.at(-1)?.payload.kind).toBe('Keyframe');
    return c;
  }

  /** POST /sessions as the attacker: the status and the error body. */
  async function create(server: TestServer, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${server.origin}/agents/${server.config.instanceId}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** Every uid the preload library saw, once the sessions had time to start. */
  async function preloadUids(): Promise<string[]> {
    await new Promise((r) => setTimeout(r, 1500));
    return readFileSync(preloadLog, 'utf8').split('\n').filter(Boolean);
  }

  async function refusesPreload(server: TestServer): Promise<void> {
    for (const backend of BACKENDS) {
      // At creation (REST; A2A session metadata is read by the same code).
      const created = await create(server, { session_backend: backend, command: 'id', env: { LD_PRELOAD: preload } });
      if (created.status === 201) {
        // Start it, as the attacker would, so that a library loaded as root shows in the log.
        const c = await TestClient.connect(String(created.body.attach_url), { token });
        await c.join({ role: 'controller' });
        c.close();
      }
      expect(created.status, backend).toBe(400);
      expect(created.body, backend).toMatchObject({ error: { code: 'env.refused', message: expect.stringMatching(/LD_PRELOAD may not be set while sessions are confined/) } });

      // At the creator's first join, which may also carry the process-start fields.
      const s = await server.createSession({ session_backend: backend, command: 'id' }, token);
      const c = await TestClient.connect(s.attach_url, { token });
      const end = (await c.join({ role: 'controller', env: { LD_PRELOAD: preload, GCONV_PATH: work } })).at(-1)!;
      expect(end.op, backend).toBe('Error');
      expect(end.payload, backend).toMatchObject({ code: 'INVALID_REQUEST', a2a_error: { data: [{ metadata: { reason: 'env.refused' } }] } });
      expect(String(end.payload.message), backend).toMatch(/LD_PRELOAD, GCONV_PATH may not be set/);
      c.close();
    }
    expect(await preloadUids()).toEqual([]);
  }

  it('with a session user: a session cannot hand LD_PRELOAD (or another loader variable) to anything, on every backend', async () => {
    await refusesPreload(await serverWith({ PTY_WS_SESSION_USER: SESSION_USER }));
  });

  it('with a session user and bwrap: the same, and no tool running as root ever holds a session variable unsealed', async () => {
    const server = await serverWith({ PTY_WS_SESSION_USER: SESSION_USER, PTY_WS_SESSION_SANDBOX: 'bwrap' });
    await refusesPreload(server);
    for (const backend of BACKENDS) {
      const mark = `sealed${Math.floor(Math.random() * 1e9)}`;
      const c = await controller(server, { session_backend: backend, env: { PWTEST_MARK: mark } });
      // The program has it under its own name...
      expect(await ask(c, 'mark', 'echo "mark-$PWTEST_MARK"'), backend).toBe(mark);
      // ...while bubblewrap's own process, root for the session's whole life, has it sealed only.
      const holders = processes().filter((p) => p.environ.some((e) => e.endsWith(`=${mark}`)));
      const asRoot = holders.filter((p) => p.uid === 0).flatMap((p) => p.environ.filter((e) => e.endsWith(`=${mark}`)));
      expect(asRoot.length, `${backend}: a root process carrying the session's variable`).toBeGreaterThan(0);
      expect(asRoot, backend).toEqual(asRoot.map(() => `${SEALED}PWTEST_MARK=${mark}`));
      c.close();
    }
  });

  it('bwrap without a session user stops a root host at start: root in a sandbox still owns every root file', async () => {
    await expect(serverWith({ PTY_WS_SESSION_SANDBOX: 'bwrap' })).rejects.toThrow(/PTY_WS_SESSION_SANDBOX=bwrap needs PTY_WS_SESSION_USER when the PTY host runs as root/);
  });

  it("the sandbox hides secret files and the multiplexers' directory, keeps the system and the server's code read-only, and can take the network away", async () => {
    // A state path long enough that the multiplexers' directory moves under /tmp.
    const stateDir = path.join(work, `state-${'x'.repeat(60)}`);
    mkdirSync(stateDir, { recursive: true });
    const server = await serverWith({ PTY_WS_SESSION_USER: SESSION_USER, PTY_WS_SESSION_SANDBOX: 'bwrap', PTY_WS_SESSION_NETWORK: 'none' }, stateDir);
    const mux = muxPaths(server.config.ptySocket).dir;
    expect(mux.startsWith(tmpdir())).toBe(true);
    const port = new URL(server.origin).port;
    const reach = `perl -MIO::Socket::INET -e 'exit(IO::Socket::INET->new(PeerAddr => "127.0.0.1:${port}", Timeout => 2) ? 0 : 1)'; echo "net-$?"`;
    const mountOptions = (p: string, tag: string) => `awk '$5 == "${p}" { o = $6 } END { print "${tag}-" (o == "" ? "none" : substr(o, 1, 2)) }' /proc/self/mountinfo`;
    const repo = path.resolve(import.meta.dirname, '../..');

    for (const backend of ['native', 'tmux'] as const) {
      const c = await controller(server, { session_backend: backend });
      expect(await ask(c, 'secret', `test -s ${secretFile}; echo "secret-$?"`), backend).toBe('1');
      expect(await ask(c, 'muxmount', mountOptions(mux, 'muxmount')), backend).toBe('rw');
      expect(await ask(c, 'muxtmux', `test -e ${mux}/tmux; echo "muxtmux-$?"`), backend).toBe('1');
      expect(await ask(c, 'usr', mountOptions('/usr', 'usr')), backend).toBe('ro');
      expect(await ask(c, 'etc', mountOptions('/etc', 'etc')), backend).toBe('ro');
      expect(await ask(c, 'code', mountOptions(repo, 'code')), backend).toBe('ro');
      expect(await ask(c, 'net', reach), backend).toBe('1');
      c.close();
    }

    // The same probe reaches the router from a session that keeps the machine's network.
    const open = await serverWith({ PTY_WS_SESSION_USER: SESSION_USER });
    const c = await controller(open, {});
    expect(await ask(c, 'net', reach.replace(port, new URL(open.origin).port))).toBe('0');
    c.close();
  });
});
