// `pty-ws start` as a user runs it: printed URLs and token, a working default session, orderly Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { b64, TestClient } from './helpers/client.ts';
import { until } from './helpers/wait.ts';

const BIN = new URL('../bin/pty-ws.js', import.meta.url).pathname;
let child: ChildProcess | null = null;
let dir = '';

afterEach(() => {
  child?.kill('SIGKILL');
  child = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = {}): { proc: ChildProcess; stdout: () => string; stderr: () => string; exit: Promise<number | null> } {
  let out = '';
  let err = '';
  const proc = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, stdout: () => out, stderr: () => err, exit };
}

describe('pty-ws start', () => {
  it('prints the attach URL and a dev token that work, and shuts down in order on SIGINT', async () => {
    dir = mkdtempSync(join(tmpdir(), 'pty-ws-cli-'));
    const r = run(['start', '--port', '0', '--state-dir', join(dir, 'state')]);
    child = r.proc;
    const attach = await until(() => /attach URL:\s+(ws:\/\/\S+)/.exec(r.stdout())?.[1], `the attach URL (stderr: ${r.stderr()})`);
    const token = await until(() => /dev token:\s+(\S+)/.exec(r.stdout())?.[1], 'the dev token');
    expect(attach).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/agents\/local\/sessions\/[0-9a-f-]{36}\/attach$/);
    expect(r.stdout()).not.toContain(':0/');

    const c = await TestClient.connect(attach, { token });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo from-cli-$((6*7))\r') });
    await c.waitForOutput('from-cli-42');

    r.proc.kill('SIGINT');
    const bye = await c.waitForFrame((f) => f.op === 'binding_goodbye', 'goodbye');
    expect(bye.payload).toEqual({ reason: 'server_shutdown' });
    expect((await c.waitForClose()).code).toBe(1000);
    expect(await r.exit).toBe(0);
    expect(existsSync(join(dir, 'state', 'pty-ws.db'))).toBe(true);
    expect(existsSync(join(dir, 'state', 'pty-host.sock'))).toBe(false);
    expect(r.stderr()).not.toContain(token);
  });

  it('refuses a bad setting at start, naming it and the accepted values', async () => {
    dir = mkdtempSync(join(tmpdir(), 'pty-ws-cli-'));
    const r = run(['start', '--state-dir', join(dir, 'state')], { PTY_WS_PORT: 'eighty', PTY_WS_AUTH: 'maybe' });
    child = r.proc;
    expect(await r.exit).toBe(2);
    expect(r.stderr()).toContain('PTY_WS_PORT');
    expect(r.stderr()).toContain('PTY_WS_AUTH');
    expect(r.stderr()).toContain('"on"');
  });

  it('prints every setting with --help', async () => {
    dir = mkdtempSync(join(tmpdir(), 'pty-ws-cli-'));
    const r = run(['--help']);
    child = r.proc;
    expect(await r.exit).toBe(0);
    for (const name of ['PTY_WS_HOST', 'PTY_WS_PORT', 'PTY_WS_DATABASE_URL', 'PTY_WS_PTY_SOCKET', 'PTY_WS_MAX_CONTROLLERS', '--keyframe-interval-frames']) {
      expect(r.stdout()).toContain(name);
    }
  });
});
