// Secrets kept out of the environment (docs/security.md, item 2): PTY_WS_JWT_SECRET_FILE is read
// from a private file, so neither the router's nor the PTY host's /proc/<pid>/environ holds it;
// a file other users can read is refused. The real CLI; the environ files the kernel shows.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, until, type Child } from '../helpers/processes.ts';
import { signJwt } from '../helpers/tokens.ts';

const SECRET = 'file-secret-0123456789-abcdefghijklmnopqrstuvwxyz';
let dir: string;
let child: Child | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-secret-'));
});
afterEach(async () => {
  await child?.stop();
  child = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const environ = (pid: number): string => readFileSync(`/proc/${pid}/environ`, 'latin1');

describe('PTY_WS_JWT_SECRET_FILE', () => {
  it('accepts JWTs signed with the secret in the file, which no process environment holds', async () => {
    const file = join(dir, 'jwt-secret');
    writeFileSync(file, `${SECRET}\n`, { mode: 0o600 });
    child = runCli(['serve', '--port', '0', '--state-dir', join(dir, 'state')], { HOME: dir, PTY_WS_JWT_SECRET_FILE: file });
    const origin = await until(() => /listening on (http:\/\/\S+)/.exec(child!.stdout())?.[1] ?? (child!.proc.exitCode !== null ? 'exited' : undefined), 'the banner');
    expect(origin, child.stderr()).not.toBe('exited');
    const hostPid = Number(/"msg":"started pty host"[^\n]*"pid":(\d+)/.exec(child.stderr())?.[1]);
    expect(hostPid).toBeGreaterThan(0);

    const list = (token: string) => fetch(`${origin}/agents/local/sessions`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    expect(await list(await signJwt({ sub: 'ops', scope: 'pty:observe' }, new TextEncoder().encode(SECRET)))).toBe(200);
    expect(await list(await signJwt({ sub: 'ops', scope: 'pty:observe' }, new TextEncoder().encode(`${SECRET}x`)))).toBe(401);

    for (const pid of [child.proc.pid!, hostPid]) expect(environ(pid)).not.toContain(SECRET);
    // The PTY host gets none of the router's settings but its log level.
    expect(environ(hostPid).split('\0').filter((v) => v.startsWith('PTY_WS_') && !v.startsWith('PTY_WS_LOG_LEVEL='))).toEqual([]);
  });

  it('refuses a secret file other users can read, and a secret given both ways', async () => {
    const file = join(dir, 'jwt-secret');
    writeFileSync(file, SECRET);
    chmodSync(file, 0o644);
    child = runCli(['serve', '--port', '0', '--state-dir', join(dir, 'state')], { HOME: dir, PTY_WS_JWT_SECRET_FILE: file });
    expect(await child.exited).toBe(2);
    expect(child.stderr()).toContain(`PTY_WS_JWT_SECRET_FILE ${file}: mode 0644 lets other users read it; chmod 600 it`);

    chmodSync(file, 0o600);
    child = runCli(['serve', '--port', '0', '--state-dir', join(dir, 'state')], { HOME: dir, PTY_WS_JWT_SECRET_FILE: file, PTY_WS_JWT_SECRET: SECRET });
    expect(await child.exited).toBe(2);
    expect(child.stderr()).toContain('set one of PTY_WS_JWT_SECRET and PTY_WS_JWT_SECRET_FILE, not both');
  });
});
