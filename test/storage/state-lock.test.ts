// One router per state directory: two real `pty-ws serve` processes on one directory, the second
// refused naming the first; the lock freed by a SIGKILL of its holder; another directory unaffected.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { endOrphans } from '../helpers/leftovers.ts';
import { BIN, runCli, startRouterProcess, type Child } from '../helpers/processes.ts';

const dirs: string[] = [];
const children: Child[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-lock-'));
  dirs.push(dir);
  return dir;
};

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  // The SIGKILLed router's PTY host outlives it by design.
  for (const d of dirs) await endOrphans(d);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the state directory lock', () => {
  it('refuses a second server on the same directory, naming the first one; SIGKILL of the holder frees it', async () => {
    const dir = newDir();
    const first = await startRouterProcess({ 'state-dir': dir });
    children.push(first);
    expect(statSync(join(dir, 'lock.key')).mode & 0o777).toBe(0o600);

    // The same directory through another path (a trailing slash and a `..`) is the same directory.
    const second = runCli(['serve', '--port', '0', '--state-dir', `${dir}/../${dir.split('/').pop()}/`], {});
    children.push(second);
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toContain(`state directory ${dir} is in use by another pty-ws server (pid ${first.proc.pid}, instance local`);
    expect(second.stdout()).not.toContain('listening on');
    // The first one is untouched.
    expect((await fetch(`${first.origin}/healthz`)).status).toBe(200);

    // A server on another directory starts meanwhile.
    const other = await startRouterProcess({ 'state-dir': newDir() });
    children.push(other);

    // Killed without a chance to clean up: the kernel frees the lock with the process.
    first.proc.kill('SIGKILL');
    await first.exited;
    const third = await startRouterProcess({ 'state-dir': dir });
    children.push(third);
    expect((await fetch(`${third.origin}/healthz`)).status).toBe(200);
  }, 60_000);

  // Containers sharing a volume: each has its own network namespace, so its own abstract socket
  // names. The record lock on the directory's file holds across them.
  const NS = `ptyws-lock-${process.pid}`;
  const canNetns = process.getuid?.() === 0 && spawnSync('ip', ['netns', 'add', NS]).status === 0;
  afterAll(() => {
    if (canNetns) spawnSync('ip', ['netns', 'del', NS]);
  });

  it.skipIf(!canNetns)(`refuses a second server on the same directory from another network namespace${canNetns ? '' : ' (needs root and ip netns)'}`, async () => {
    const dir = newDir();
    const first = await startRouterProcess({ 'state-dir': dir });
    children.push(first);
    spawnSync('ip', ['netns', 'exec', NS, 'ip', 'link', 'set', 'lo', 'up']);
    const proc = spawn('ip', ['netns', 'exec', NS, process.execPath, BIN, 'serve', '--port', '0', '--state-dir', dir], {
      env: { PATH: process.env.PATH, SHELL: '/bin/sh', PTY_WS_DEV_TOKEN_POLICY: 'per-start' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    let out = '';
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
      proc.once('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(out).not.toContain('listening on');
    expect(code).toBe(1);
    expect(err).toContain(`state directory ${dir} is in use by another pty-ws server (its holder runs in another network namespace`);
    // The first one serves on, its lease and its numbering untouched.
    expect((await fetch(`${first.origin}/healthz`)).status).toBe(200);
  }, 60_000);
});

