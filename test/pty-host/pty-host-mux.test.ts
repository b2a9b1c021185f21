// The multiplexer backends on a real PTY host with real tmux and screen (CI installs both):
// exact process start, typing, resizing, killing everything, and surviving a host restart.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { muxPaths } from '../../pty/backends/paths.ts';
import { sessionMembers } from '../../pty/backends/process-tree.ts';
import { ensurePtyHost, type NodePtyHostHandle as PtyHostHandle } from '../../src/adapter/node/pty-host-process.ts';
import type { SpawnSpec } from '../../src/ports/pty-host.ts';
import { expectNoneLeft, killMultiplexers } from '../helpers/leftovers.ts';
import { quietLogger, Recorder, useHost, WAIT } from '../helpers/pty-host.ts';

const MANAGED = ['tmux', 'screen'] as const;

function spec(dir: string, backend: string, argv: string[], overrides: Partial<SpawnSpec> = {}): SpawnSpec {
  return { sessionId: randomUUID(), backend, argv, cwd: dir, env: { PATH: '/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8', PS1: 'ready$ ' }, cols: 80, rows: 24, ...overrides };
}

describe.each(MANAGED)('%s/managed on the PTY host', (backend) => {
  const h = useHost(`pty-ws-${backend}-`);

  async function start(argv: string[], overrides: Partial<SpawnSpec> = {}): Promise<SpawnSpec & { pid: number }> {
    const s = spec(h.dir, backend, argv, overrides);
    h.started.push(s.sessionId);
    const { pid } = await h.host.spawn(s);
    return { ...s, pid };
  }

  it('is offered by the host, and zellij is never claimed', () => {
    expect(h.host.backends).toContain(backend);
    expect(h.host.backends).not.toContain('zellij');
  });

  it('runs argv exactly in the cwd with the env and size asked for, on a private server', async () => {
    const cwd = path.join(h.dir, 'a dir');
    await mkdir(cwd, { recursive: true });
    const s = await start(['/bin/sh', '-c', 'printf "[%s|%s|%s|%s|%s]\\n" "$FOO" "$TERM" "$(pwd)" "$(stty size)" "$1"; env > env.txt; sleep 30', 'sh', 'one arg'], {
      cwd,
      env: { PATH: '/usr/bin:/bin', FOO: 'a b  c', TERM: 'xterm-256color' },
      cols: 100,
      rows: 30,
    });
    await h.rec.waitForOutput(s.sessionId, new RegExp(`\\[a b  c\\|xterm-256color\\|${cwd}\\|30 100\\|one arg\\]`));
    expect((await h.host.list()).find((i) => i.sessionId === s.sessionId)).toMatchObject({ backend, pid: s.pid, cols: 100, rows: 30 });
    // The program itself leads the session of its terminal: the pid reported is the program's.
    expect(sessionMembers(s.pid)).toContain(s.pid);
    // Nothing of the router's or the host's environment: the session's own plus what the multiplexer adds.
    const env = await vi.waitFor(async () => {
      const text = (await import('node:fs')).readFileSync(path.join(cwd, 'env.txt'), 'utf8');
      expect(text).toContain('FOO=');
      return text;
    }, WAIT);
    const names = env.trim().split('\n').map((l) => l.slice(0, l.indexOf('=')));
    const added = backend === 'tmux' ? ['TMUX', 'TMUX_PANE', 'TERM_PROGRAM', 'TERM_PROGRAM_VERSION', 'SHELL'] : ['STY', 'WINDOW', 'TERMCAP', 'SHELL'];
    expect(names.filter((n) => !['FOO', 'PATH', 'TERM', 'PWD', ...added].includes(n))).toEqual([]);
    // The user's default server is not touched: the session is on the host's private one.
    expect(existsSync(muxPaths(h.socketPath).dir)).toBe(true);
  });

  it('runs a one-word argv as that program, without a shell reading it', async () => {
    const prog = path.join(h.dir, 'my prog;$(echo no)');
    await writeFile(prog, '#!/bin/sh\necho "ran:$0:$#"\nsleep 30\n', { mode: 0o755 });
    const s = await start([prog]);
    await h.rec.waitForOutput(s.sessionId, /ran:.*my prog;\$\(echo no\):0/);
  });

  it('passes typed input through (no prefix or command key) and resizes', async () => {
    const s = await start(['/bin/sh']);
    await h.rec.waitForOutput(s.sessionId, /ready\$/);
    // C-b d (tmux) and C-a d (screen) would detach a client with the default bindings.
    h.host.write(s.sessionId, new TextEncoder().encode('\u0002d\u0001d'));
    h.host.write(s.sessionId, new TextEncoder().encode('\u0015echo typed-$((6*7))\r'));
    await h.rec.waitForOutput(s.sessionId, /typed-42/);
    h.host.resize(s.sessionId, 90, 20);
    // The multiplexer passes the new size on to the program a moment later.
    await vi.waitFor(() => {
      h.host.write(s.sessionId, new TextEncoder().encode('stty size\r'));
      expect(h.rec.text(s.sessionId)).toMatch(/20 90/);
    }, { timeout: 8000, interval: 300 });
    expect((await h.host.list()).find((i) => i.sessionId === s.sessionId)).toMatchObject({ cols: 90, rows: 20 });
  });

  it('reports how the program ended', async () => {
    const s = await start(['/bin/sh', '-c', 'echo bye; exit 7']);
    // tmux keeps the status (its pane-died hook writes it down); screen does not keep one.
    expect(await h.rec.exitOf(s.sessionId)).toEqual(backend === 'tmux' ? { exitCode: 7, signal: null } : { exitCode: null, signal: null });
    expect((await h.host.list()).map((i) => i.sessionId)).not.toContain(s.sessionId);
  });

  it('kill ends every process of the session, even those ignoring SIGHUP, and the multiplexer session', async () => {
    const s = await start(['/bin/sh', '-c', 'trap "" HUP; sleep 1000 & sleep 1001 & echo started; wait']);
    await h.rec.waitForOutput(s.sessionId, /started/);
    await vi.waitFor(() => expect(sessionMembers(s.pid).length).toBeGreaterThanOrEqual(3), WAIT);
    h.host.kill(s.sessionId);
    await h.rec.exitOf(s.sessionId);
    await vi.waitFor(() => expect(sessionMembers(s.pid)).toEqual([]), WAIT);
    expect((await h.host.list()).map((i) => i.sessionId)).not.toContain(s.sessionId);
  });

  it('refuses a missing program or cwd with a clear error and keeps serving', async () => {
    await expect(h.host.spawn(spec(h.dir, backend, ['no-such-program-here']))).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining('no-such-program-here') });
    await expect(h.host.spawn(spec(h.dir, backend, ['/bin/sh'], { cwd: path.join(h.dir, 'missing') }))).rejects.toMatchObject({ code: 'bad_cwd' });
    await expect(h.host.spawn(spec(h.dir, backend, ['/bin/sh'], { sessionId: 'bad.id:here' }))).rejects.toMatchObject({ code: 'spawn_failed' });
    const s = await start(['/bin/sh', '-c', 'echo still-serving; sleep 30']);
    await h.rec.waitForOutput(s.sessionId, /still-serving/);
  });
});

describe('PTY host restarts', () => {
  let dir: string;
  let socketPath: string;
  const handles: PtyHostHandle[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pty-ws-hostrestart-'));
    socketPath = path.join(dir, 'host.sock');
  });

  afterAll(async () => {
    for (const h of handles) await h.stop();
    await killMultiplexers(socketPath);
    await expectNoneLeft(dir);
    await rm(dir, { recursive: true, force: true });
  });

  async function startHost(): Promise<PtyHostHandle> {
    const h = await ensurePtyHost({ socketPath, logger: quietLogger() });
    handles.push(h);
    return h;
  }

  it('a new host re-attaches the multiplexer sessions, reports those that ended meanwhile, and native ones are gone', async () => {
    const first = await startHost();
    const rec1 = new Recorder(first.host);
    const shells = new Map<string, SpawnSpec & { pid: number }>();
    for (const backend of [...MANAGED, 'native']) {
      const s = spec(dir, backend, ['/bin/sh']);
      shells.set(backend, { ...s, pid: (await first.host.spawn(s)).pid });
      await rec1.waitForOutput(s.sessionId, /ready\$/);
      first.host.write(s.sessionId, new TextEncoder().encode(`echo before-${backend}\r`));
      await rec1.waitForOutput(s.sessionId, new RegExp(`\\r\\nbefore-${backend}`));
    }
    const ending = spec(dir, 'tmux', ['/bin/sh', '-c', 'sleep 1; exit 5']);
    await first.host.spawn(ending);

    first.child!.kill('SIGKILL');
    await vi.waitFor(() => expect(rec1.lost).toBeDefined(), WAIT);
    // The tmux program exits while no host runs.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const second = await startHost();
    expect(second.child!.pid).not.toBe(first.child!.pid);
    const listed = await second.host.list();
    for (const backend of MANAGED) expect(listed).toContainEqual(expect.objectContaining({ sessionId: shells.get(backend)!.sessionId, backend, pid: shells.get(backend)!.pid }));
    expect(listed.map((i) => i.sessionId)).toContain(ending.sessionId);
    expect(listed.map((i) => i.sessionId)).not.toContain(shells.get('native')!.sessionId);
    await vi.waitFor(() => expect(sessionMembers(shells.get('native')!.pid)).toEqual([]), WAIT);

    const rec2 = new Recorder(second.host);
    expect(await rec2.exitOf(ending.sessionId)).toEqual({ exitCode: 5, signal: null });
    for (const backend of MANAGED) {
      const id = shells.get(backend)!.sessionId;
      // Attaching redraws the screen, so what was on it before the restart is there again.
      await rec2.waitForOutput(id, new RegExp(`before-${backend}`));
      second.host.write(id, new TextEncoder().encode(`echo after-$((40+2))\r`));
      await rec2.waitForOutput(id, /after-42/);
      second.host.kill(id);
      await rec2.exitOf(id);
    }
    expect(await second.host.list()).toEqual([]);
  });
});
