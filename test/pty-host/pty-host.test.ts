import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isAlive } from '../../pty/backends/process-tree.ts';
import type { SpawnSpec } from '../../src/ports/pty-host.ts';
import { PtyHostClient } from '../../src/adapter/node/pty-host-client.ts';
import { ensurePtyHost, type NodePtyHostHandle as PtyHostHandle } from '../../src/adapter/node/pty-host-process.ts';
import { expectNoneLeft } from '../helpers/leftovers.ts';
import { quietLogger, Recorder, useHost, WAIT } from '../helpers/pty-host.ts';


/** Polls until a fresh connection to the socket path fails. */
async function waitUntilNotListening(socketPath: string): Promise<void> {
  await vi.waitFor(async () => {
    const listening = await new Promise<boolean>((resolve) => {
      const probe = connect(socketPath, () => {
        probe.destroy();
        resolve(true);
      });
      probe.on('error', () => resolve(false));
    });
    expect(listening).toBe(false);
  }, WAIT);
}

describe('pty host', () => {
  const h = useHost('pty-ws-host-');

  function spec(argv: string[], overrides: Partial<SpawnSpec> = {}): SpawnSpec {
    const sessionId = randomUUID();
    h.started.push(sessionId);
    return { sessionId, backend: 'native', argv, cwd: h.dir, env: { PATH: '/usr/bin:/bin', HOME: h.dir, LANG: 'C' }, cols: 80, rows: 24, ...overrides };
  }

  /** An interactive shell, once it has prompted: input typed earlier would race the prompt. */
  async function shell(): Promise<SpawnSpec> {
    const s = spec(['/bin/sh']);
    s.env.PS1 = 'ready$ ';
    await h.host.spawn(s);
    await h.rec.waitForOutput(s.sessionId, /ready\$ $/);
    return s;
  }

  it('started a host process listening on an owner-only socket', () => {
    expect(h.handle.child?.pid).toBeGreaterThan(0);
    expect(statSync(h.socketPath).isSocket()).toBe(true);
    expect(statSync(h.socketPath).mode & 0o777).toBe(0o600);
  });

  it('runs a shell and relays its output', async () => {
    const s = await shell();
    h.host.write(s.sessionId, new TextEncoder().encode('echo hi\r'));
    // The echoed command line is "echo hi"; the command's own output starts a line.
    await h.rec.waitForOutput(s.sessionId, /\r\nhi\r\n/);
  });

  it('resizes the terminal', async () => {
    const s = await shell();
    h.host.resize(s.sessionId, 100, 30);
    h.host.write(s.sessionId, new TextEncoder().encode('stty size\r'));
    await h.rec.waitForOutput(s.sessionId, /\r\n30 100\r\n/);
    expect((await h.host.list()).find((i) => i.sessionId === s.sessionId)).toMatchObject({ cols: 100, rows: 30 });
  });

  it('passes the environment exactly, with TERM defaulting to xterm-256color', async () => {
    const s = spec(['/bin/sh', '-c', 'echo "[$TERM|$FOO|$HOME]"'], { env: { PATH: '/usr/bin:/bin', FOO: 'bar baz' } });
    await h.host.spawn(s);
    await h.rec.exitOf(s.sessionId);
    expect(h.rec.text(s.sessionId)).toContain('[xterm-256color|bar baz|]');
  });

  it("passes a session's own PERL* variables through untouched by the descriptor-closing exec (pty/backends/terminal-spawn.ts)", async () => {
    // PERL5OPT would make a Perl that read it load a module that does not exist and fail.
    const s = spec(['/bin/sh', '-c', 'echo "[$PERL5OPT|$PERL5LIB|${PERL_BADLANG-unset}]"'], { env: { PATH: '/usr/bin:/bin', PERL5OPT: '-MNo::Such::Module', PERL5LIB: '/nowhere' } });
    await h.host.spawn(s);
    expect(await h.rec.exitOf(s.sessionId)).toEqual({ exitCode: 0, signal: null });
    expect(h.rec.text(s.sessionId)).toContain('[-MNo::Such::Module|/nowhere|unset]');
  });

  it('refuses a program that does not exist, and keeps working', async () => {
    await expect(h.host.spawn(spec(['/nonexistent/prog']))).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('/nonexistent/prog'),
    });
    await expect(h.host.spawn(spec(['no-such-program-here']))).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('no-such-program-here'),
    });
    const s = spec(['true']);
    await h.host.spawn(s);
    expect(await h.rec.exitOf(s.sessionId)).toEqual({ exitCode: 0, signal: null });
  });

  it('refuses a file that is not executable', async () => {
    const file = path.join(h.dir, 'not-executable.sh');
    await writeFile(file, '#!/bin/sh\necho no\n', { mode: 0o644 });
    await expect(h.host.spawn(spec([file]))).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses a bad working directory', async () => {
    await expect(h.host.spawn(spec(['/bin/sh'], { cwd: path.join(h.dir, 'missing') }))).rejects.toMatchObject({ code: 'bad_cwd' });
    const file = path.join(h.dir, 'a-file');
    await writeFile(file, '');
    await expect(h.host.spawn(spec(['/bin/sh'], { cwd: file }))).rejects.toMatchObject({ code: 'bad_cwd' });
    await expect(h.host.spawn(spec(['/bin/sh'], { cwd: 'relative/dir' }))).rejects.toMatchObject({ code: 'bad_cwd' });
  });

  it('refuses a duplicate session id and a nonsensical size', async () => {
    const s = spec(['sleep', '30']);
    await h.host.spawn(s);
    await expect(h.host.spawn(s)).rejects.toMatchObject({ code: 'exists' });
    await expect(h.host.spawn(spec(['/bin/sh'], { cols: 0 }))).rejects.toMatchObject({ code: 'spawn_failed' });
  });

  it('reports the exit code', async () => {
    const s = spec(['/bin/sh', '-c', 'exit 3']);
    await h.host.spawn(s);
    expect(await h.rec.exitOf(s.sessionId)).toEqual({ exitCode: 3, signal: null });
  });

  it('kills with SIGHUP by default, or with the signal asked for', async () => {
    const hup = spec(['sleep', '30']);
    const term = spec(['sleep', '30']);
    await h.host.spawn(hup);
    await h.host.spawn(term);
    h.host.kill(hup.sessionId);
    h.host.kill(term.sessionId, 'SIGTERM');
    expect(await h.rec.exitOf(hup.sessionId)).toEqual({ exitCode: null, signal: 1 });
    expect(await h.rec.exitOf(term.sessionId)).toEqual({ exitCode: null, signal: 15 });
  });

  it('lists live sessions only', async () => {
    const a = spec(['sleep', '30']);
    const b = spec(['sleep', '30']);
    const { pid: pidA } = await h.host.spawn(a);
    const { pid: pidB } = await h.host.spawn(b);
    expect(await h.host.list()).toEqual(
      expect.arrayContaining([
        { sessionId: a.sessionId, backend: 'native', pid: pidA, cols: 80, rows: 24 },
        { sessionId: b.sessionId, backend: 'native', pid: pidB, cols: 80, rows: 24 },
      ]),
    );
    h.host.kill(a.sessionId);
    await h.rec.exitOf(a.sessionId);
    const ids = (await h.host.list()).map((i) => i.sessionId);
    expect(ids).toContain(b.sessionId);
    expect(ids).not.toContain(a.sessionId);
  });

  it('serves a second connection that sees the running sessions and their events', async () => {
    const s = await shell();
    const second = await PtyHostClient.connect(h.socketPath);
    try {
      const rec2 = new Recorder(second);
      expect((await second.list()).map((i) => i.sessionId)).toContain(s.sessionId);
      second.write(s.sessionId, new TextEncoder().encode('echo $((6*7))\r'));
      await rec2.waitForOutput(s.sessionId, /\r\n42\r\n/);
      await h.rec.waitForOutput(s.sessionId, /\r\n42\r\n/);
    } finally {
      await second.close();
    }
  });

  it.each([
    ['an HTTP request', Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')],
    ['a frame with a broken header', Buffer.from([0, 0, 0, 9, 0, 0, 0, 5, 0x7b, 0x22, 0x74, 0x22, 0x3a])],
  ])('drops a client that sends %s, and serves the others', async (_name, garbage) => {
    const s = await shell();
    const raw = connect(h.socketPath);
    const closed = new Promise<void>((resolve) => raw.on('close', () => resolve()));
    raw.on('error', () => {});
    raw.resume(); // the close only surfaces once the host's greeting has been read
    raw.write(garbage);
    await closed;
    h.host.write(s.sessionId, new TextEncoder().encode('echo $((6*8))\r'));
    await h.rec.waitForOutput(s.sessionId, /\r\n48\r\n/);
    expect(h.rec.lost).toBeUndefined();
  });

  it('keeps the stream going when a listener throws', async () => {
    const unsubscribe = h.host.subscribe({
      onData: () => {
        throw new Error('listener bug');
      },
      onExit: () => {
        throw new Error('listener bug');
      },
    });
    try {
      const s = spec(['/bin/sh', '-c', 'echo one; echo two']);
      await h.host.spawn(s);
      expect(await h.rec.exitOf(s.sessionId)).toEqual({ exitCode: 0, signal: null });
      expect(h.rec.text(s.sessionId)).toBe('one\r\ntwo\r\n');
    } finally {
      unsubscribe();
    }
  });

  it('delivers 5 MB of output completely to a slow reader', async () => {
    const s = spec(['/bin/sh', '-c', 'head -c 3750000 /dev/urandom | base64']);
    let chunks = 0;
    // Stalling the reader now and then fills the socket, so the host has to pause the PTY.
    const unsubscribe = h.host.subscribe({
      onData: (id) => {
        if (id !== s.sessionId || ++chunks % 150 !== 0) return;
        const until = Date.now() + 40;
        while (Date.now() < until);
      },
      onExit: () => {},
    });
    try {
      await h.host.spawn(s);
      expect(await h.rec.exitOf(s.sessionId)).toEqual({ exitCode: 0, signal: null });
      const received = h.rec.text(s.sessionId).replace(/\r\n/g, '');
      expect(received.length).toBe(5_000_000);
      expect(received).toMatch(/^[A-Za-z0-9+/]+$/);
    } finally {
      unsubscribe();
    }
  });

  it('reuses a host that is already listening', async () => {
    const again = await ensurePtyHost({ socketPath: h.socketPath, logger: quietLogger() });
    expect(again.child).toBeUndefined();
    const s = spec(['sleep', '30']);
    await again.host.spawn(s);
    expect((await h.host.list()).map((i) => i.sessionId)).toContain(s.sessionId);
    await again.stop();
    expect(h.handle.child?.exitCode).toBeNull();
    expect((await h.host.list()).map((i) => i.sessionId)).toContain(s.sessionId);
  });
});

describe('pty host lifecycle', () => {
  let dir: string;
  const handles: PtyHostHandle[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pty-ws-life-'));
  });

  afterEach(async () => {
    for (const h of handles.splice(0)) await h.stop();
  });

  afterAll(async () => {
    await expectNoneLeft(dir);
    await rm(dir, { recursive: true, force: true });
  });

  async function start(socketPath: string): Promise<PtyHostHandle> {
    const h = await ensurePtyHost({ socketPath, logger: quietLogger() });
    handles.push(h);
    return h;
  }

  it('stop() ends the host, its sessions and its socket, and other clients learn of it', async () => {
    const socketPath = path.join(dir, 'stop.sock');
    const h = await start(socketPath);
    const { pid } = await h.host.spawn({ sessionId: 's', backend: 'native', argv: ['/bin/sleep', '30'], cwd: dir, env: {}, cols: 80, rows: 24 });
    const observer = await PtyHostClient.connect(socketPath);
    const rec = new Recorder(observer);
    const own = new Recorder(h.host);

    await h.stop();

    expect(h.child?.exitCode ?? h.child?.signalCode).toBe(0);
    expect(existsSync(socketPath)).toBe(false);
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), WAIT);
    await vi.waitFor(() => expect(rec.lost).toBeDefined(), WAIT);
    await expect(observer.list()).rejects.toMatchObject({ code: 'spawn_failed' });
    expect(own.lost).toBeUndefined();
  });

  it('replaces a host that died, removing its stale socket', async () => {
    const socketPath = path.join(dir, 'stale.sock');
    const first = await start(socketPath);
    const rec = new Recorder(first.host);
    first.child?.kill('SIGKILL');
    // Sent after the SIGKILL, so it can only be answered by the connection loss.
    await expect(first.host.list()).rejects.toMatchObject({ code: 'spawn_failed', message: expect.stringContaining('lost') });
    expect(rec.lost).toBeDefined();
    await expect(first.host.spawn({ sessionId: 'x', backend: 'native', argv: ['/bin/true'], cwd: dir, env: {}, cols: 80, rows: 24 })).rejects.toMatchObject({
      code: 'spawn_failed',
    });
    await waitUntilNotListening(socketPath);
    expect(existsSync(socketPath)).toBe(true);

    const second = await start(socketPath);
    expect(second.child?.pid).not.toBe(first.child?.pid);
    expect(await second.host.list()).toEqual([]);
  });

  it('holds output while no connection receives events, with the PTY paused, and delivers it all later', async () => {
    const socketPath = path.join(dir, 'held.sock');
    const h = await start(socketPath);
    // This connection never asks for events: nobody receives what the session prints.
    const { pid } = await h.host.spawn({
      sessionId: 'held',
      backend: 'native',
      argv: ['/bin/sh', '-c', 'head -c 2000000 /dev/zero | tr "\\0" x; echo; echo held-done'],
      cwd: dir,
      env: { PATH: '/usr/bin:/bin' },
      cols: 80,
      rows: 24,
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // Paused: the program is stuck writing to its terminal instead of finishing.
    expect(isAlive(pid)).toBe(true);
    const late = await PtyHostClient.connect(socketPath);
    try {
      const rec = new Recorder(late);
      expect(await rec.exitOf('held')).toEqual({ exitCode: 0, signal: null });
      expect(rec.text('held')).toBe(`${'x'.repeat(2_000_000)}\r\nheld-done\r\n`);
    } finally {
      await late.close();
    }
  });

  it('an exit nobody heard stays listed until a connection receives it', async () => {
    const socketPath = path.join(dir, 'unheard.sock');
    const h = await start(socketPath);
    await h.host.spawn({ sessionId: 'quick', backend: 'native', argv: ['/bin/sh', '-c', 'echo quick-$((6*7))'], cwd: dir, env: { PATH: '/usr/bin:/bin' }, cols: 80, rows: 24 });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect((await h.host.list()).map((i) => i.sessionId)).toEqual(['quick']);
    const rec = new Recorder(h.host);
    expect(await rec.exitOf('quick')).toEqual({ exitCode: 0, signal: null });
    expect(rec.text('quick')).toBe('quick-42\r\n');
    expect(await h.host.list()).toEqual([]);
  });

  it('refuses a backend it does not run, and keeps serving', async () => {
    const h = await start(path.join(dir, 'backend.sock'));
    expect(h.host.backends).toContain('native');
    await expect(h.host.spawn({ sessionId: 'z', backend: 'zellij', argv: ['/bin/sh'], cwd: dir, env: {}, cols: 80, rows: 24 })).rejects.toMatchObject({
      code: 'backend_unavailable',
      message: expect.stringContaining('zellij'),
    });
    expect(await h.host.list()).toEqual([]);
  });

  it('explains why a host could not start', async () => {
    const blocker = path.join(dir, 'not-a-socket');
    await writeFile(blocker, 'precious');
    await expect(ensurePtyHost({ socketPath: blocker, logger: quietLogger() })).rejects.toThrow(/not a socket/);
    expect(existsSync(blocker)).toBe(true);
  });
});
