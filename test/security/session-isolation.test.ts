// Security item 2 (docs/security.md): a session cannot reach the service. From inside a real
// session (real router, PTY host, shell; native and tmux), the attacks of the report are tried
// again: read the router's environment (its JWT secret), read the database, reach the PTY host
// socket, read another session's environment or terminal. Runs as root (CI does), creating an
// unprivileged session user; elsewhere it is skipped, saying why.
import { existsSync, readlinkSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.ts';
import { ask, ensureSessionUser, SESSION_USER, SESSION_USER_HOME } from '../helpers/session-user.ts';
import { startTestServer, stopWithMultiplexers, type TestServer } from '../helpers/server.ts';
import { signJwt } from '../helpers/tokens.ts';
import { until } from '../helpers/wait.ts';

const USER = SESSION_USER;
const HOME = SESSION_USER_HOME;
const SECRET = 'isolation-test-secret-0123456789-abcdefghijk';
const isRoot = process.getuid?.() === 0;
const hasBwrap = existsSync('/usr/bin/bwrap');

/** Pid of the process (other than ours) whose command line contains `marker`. */
function pidOf(marker: string): number | undefined {
  for (const e of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      if (Number(e) !== process.pid && readFileSync(`/proc/${e}/cmdline`, 'latin1').includes(marker) && !readFileSync(`/proc/${e}/cmdline`, 'latin1').includes('bwrap')) return Number(e);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

async function attacks(c: TestClient, server: TestServer, victimPid: number, victimPts: string) {
  return {
    uid: await ask(c, 'uid', 'echo "uid-$(id -u)"'),
    routerEnv: await ask(c, 'routerenv', `grep -c ${SECRET} /proc/${process.pid}/environ >/dev/null 2>&1; echo "routerenv-$?"`),
    database: await ask(c, 'database', `head -c 16 ${server.dir}/pty-ws.db >/dev/null 2>&1; echo "database-$?"`),
    socket: await ask(c, 'socket', `test -S ${server.config.ptySocket}; echo "socket-$?"`),
    victimEnv: await ask(c, 'victimenv', `cat /proc/${victimPid}/environ >/dev/null 2>&1; echo "victimenv-$?"`),
    victimSeen: await ask(c, 'victimseen', `test -e /proc/${victimPid}; echo "victimseen-$?"`),
    victimPts: await ask(c, 'victimpts', `test -w ${victimPts}; echo "victimpts-$?"`),
  };
}

describe.skipIf(!isRoot || !hasBwrap)(`sessions confined (${isRoot ? '' : 'needs root to create a session user; '}${hasBwrap ? '' : 'needs bwrap (Debian bubblewrap)'})`, () => {
  let uid: number;
  let servers: TestServer[] = [];
  let token: string;

  beforeAll(async () => {
    uid = ensureSessionUser();
    token = await signJwt({ sub: 'tester', scope: 'pty:control' }, new TextEncoder().encode(SECRET));
  });
  afterAll(async () => {
    // tmux/screen sessions keep their PTY host running on purpose: end them all, and check.
    for (const s of servers) await stopWithMultiplexers(s);
    servers = [];
  });

  async function serverWith(env: Record<string, string>): Promise<TestServer> {
    const s = await startTestServer({ HOME, PTY_WS_JWT_SECRET: SECRET, ...env });
    servers.push(s);
    return s;
  }

  /** A victim session, and the pid and terminal of its shell as the host sees them. */
  async function victim(server: TestServer, backend: string): Promise<{ client: TestClient; pid: number; pts: string }> {
    const marker = `victim${Math.floor(Math.random() * 1e9)}`;
    const s = await server.createSession({ session_backend: backend, command: `exec sh -c 'sleep 60' ${marker}`, env: { VICTIM_SECRET: 'b-secret' } }, token);
    const client = await TestClient.connect(s.attach_url, { token });
    await client.join({ role: 'controller' });
    const pid = await until(() => pidOf(marker), 'victim pid');
    return { client, pid, pts: readlinkSync(`/proc/${pid}/fd/0`) };
  }

  async function attacker(server: TestServer, backend: string): Promise<TestClient> {
    const s = await server.createSession({ session_backend: backend }, token);
    const c = await TestClient.connect(s.attach_url, { token });
    await c.join({ role: 'controller' });
    return c;
  }

  for (const backend of ['native', 'tmux', 'screen']) {
    it(`${backend}: with a session user and the bwrap sandbox, nothing of the service or of other sessions is reachable`, async () => {
      const server = await serverWith({ PTY_WS_SESSION_USER: USER, PTY_WS_SESSION_SANDBOX: 'bwrap' });
      const v = await victim(server, backend);
      const a = await attacker(server, backend);
      expect(await attacks(a, server, v.pid, v.pts)).toEqual({
        uid: String(uid),
        routerEnv: '2', // grep: no such file (a PID namespace of its own)
        database: '1',
        socket: '1',
        victimEnv: '1',
        victimSeen: '1',
        victimPts: '1',
      });
      // The sandbox is still a working terminal: its own /dev, the user's home.
      expect(await ask(a, 'home', 'echo "home-$HOME"')).toBe(HOME);
      expect(await ask(a, 'devpts', 'echo "devpts-$(ls /dev/pts | tr -d "\\n")"')).toBe('ptmx');
      a.close();
      v.client.close();
    });
  }

  it('with a session user only: the router environment, the database and the socket are out of reach', async () => {
    const server = await serverWith({ PTY_WS_SESSION_USER: USER });
    const v = await victim(server, 'native');
    const a = await attacker(server, 'native');
    const got = await attacks(a, server, v.pid, v.pts);
    expect(got).toMatchObject({ uid: String(uid), routerEnv: '2', database: '1', socket: '1', victimPts: '1' });
    // Documented limit of this mode: same-user sessions can see one another's processes.
    expect(got.victimSeen).toBe('0');
    a.close();
    v.client.close();
  });

  it('a router configured for confinement refuses a running PTY host that does not confine', async () => {
    const plain = await serverWith({});
    // A second router on the same socket, asking for a session user: the host there runs sessions as root.
    await expect(
      startTestServer({ HOME, PTY_WS_SESSION_USER: USER, PTY_WS_PTY_SOCKET: plain.config.ptySocket }),
    ).rejects.toThrow(/PTY host runs sessions with user \(the host's own\), sandbox none, but this router is configured for user ptyws-session-test/);
    // The plain server still works.
    const c = await attacker(plain, 'native');
    expect(await ask(c, 'uid', 'echo "uid-$(id -u)"')).toBe('0');
    c.close();
  });

  it('an unknown or privileged session user stops the start with a clear error', async () => {
    await expect(startTestServer({ HOME, PTY_WS_SESSION_USER: 'no-such-user-xyz' })).rejects.toThrow(/no such user .{0,2}no-such-user-xyz/);
    await expect(startTestServer({ HOME, PTY_WS_SESSION_USER: 'root' })).rejects.toThrow(/is root \(uid 0\)/);
  });
});
