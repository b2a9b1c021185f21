// The PTY host a Node router starts inherits the router's environment without its PTY_WS_
// settings (tokens, database credentials), and is told the few it uses as arguments: read from
// /proc of the real host process.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startRouterProcess, until, type RouterProcess } from '../helpers/processes.ts';

const dir = mkdtempSync(join(tmpdir(), 'pty-ws-host-env-'));
let router: RouterProcess | undefined;
afterAll(async () => {
  await router?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('the host started by `pty-ws serve` has no PTY_WS_ secrets in its environment', async () => {
  const secret = `node-secret-${process.pid}`;
  router = await startRouterProcess({ 'state-dir': dir }, { PTY_WS_DATABASE_AUTH_TOKEN: secret, PTY_WS_LOG_LEVEL: 'info' });
  const pid = await until(() => Number(/"msg":"started pty host"[^\n]*"pid":(\d+)/.exec(router!.stderr())?.[1]) || undefined, 'the host pid');
  const env = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').filter(Boolean);
  expect(env.some((l) => l.startsWith('PATH='))).toBe(true);
  expect(env.filter((l) => l.startsWith('PTY_WS_'))).toEqual([]);
  expect(env.join('\n')).not.toContain(secret);
  // What it is to know of the router's settings it is told as arguments (pty/wire/host-config.ts).
  const args = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
  expect(args).toEqual(expect.arrayContaining(['--socket', join(dir, 'pty-host.sock'), '--log-level', 'info', '--started-by', dir]));
  expect(args.join(' ')).not.toContain(secret);
}, 60_000);
