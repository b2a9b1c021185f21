// The dev token survives a restart (issue 21): real `pty-ws start` children on one state dir, the
// real PTY host, REST and a real WebSocket join. Only the token's hash is stored (0600); the banner
// prints the token at the first start only; `pty-ws token` makes a new one, which the running
// server honours within a second while the old one is refused, and prints that server's page URL.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.ts';
import { endAnyOrphans, expectNoneLeft } from '../helpers/leftovers.ts';
import { runCli, until, type Child } from '../helpers/processes.ts';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const KEEP = { PTY_WS_DEV_TOKEN_POLICY: 'keep' };

async function start(dir: string): Promise<Child & { origin: string; attachUrl: string }> {
  const child = runCli(['start', '--port', '0', '--state-dir', join(dir, 'state')], { HOME: dir, ...KEEP });
  cleanups.push(() => child.stop());
  const attachUrl = await until(() => /attach URL:\s+(\S+)/.exec(child.stdout())?.[1] ?? (child.proc.exitCode !== null ? 'exited' : undefined), 'the banner', 60_000);
  if (attachUrl === 'exited') throw new Error(`pty-ws start exited: ${child.stderr()}`);
  await until(() => /sessions:\s/.test(child.stdout()) && /\n$/.test(child.stdout()), 'the whole banner');
  return { ...child, origin: /listening on (http:\/\/\S+)/.exec(child.stdout())![1]!, attachUrl };
}

const sessionsStatus = async (origin: string, token: string) =>
  (await fetch(`${origin}/agents/local/sessions`, { headers: { authorization: `Bearer ${token}` } })).status;

async function joins(attachUrl: string, token: string): Promise<void> {
  const c = await TestClient.connect(attachUrl, { token });
  try {
    const frames = await c.join({ role: 'controller' });
    expect(frames.find((f) => f.payload.kind === 'RoleAssigned')?.payload.role).toBe('controller');
  } finally {
    c.close();
  }
}

describe('the dev token', () => {
  it('is printed at the first start only, kept as a 0600 hash, and still works after a restart (REST and WebSocket)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pty-ws-devtoken-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // A router killed after its stop's grace leaves its PTY host and shell, by design: end them first.
    cleanups.push(() => endAnyOrphans(dir));
    const first = await start(dir);
    const token = /dev token:\s+(\S+)/.exec(first.stdout())![1]!;
    // The page URL opens the default session.
    const session = /attach URL:\s+\S+\/sessions\/([^/]+)\/attach/.exec(first.stdout())![1]!;
    expect(first.stdout()).toContain(`/#token=${token}&session=${session}`);
    const file = join(dir, 'state', 'dev-token.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = readFileSync(file, 'utf8');
    expect(stored).not.toContain(token);
    expect(JSON.parse(stored)).toMatchObject({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await sessionsStatus(first.origin, token)).toBe(200);
    await first.stop();

    const second = await start(dir);
    // Nothing to print: the banner says the earlier token still works, and has no "dev token:" line to misread.
    expect(second.stdout()).not.toMatch(/dev token:/);
    expect(second.stdout()).not.toContain(token);
    expect(second.stdout()).toMatch(/dev token printed at an earlier start still works/);
    expect(second.stdout()).toMatch(/web page: +http:\S+\/#session=[\w-]+\n/);
    expect(await sessionsStatus(second.origin, token)).toBe(200);
    await joins(second.attachUrl, token);
    expect(await sessionsStatus(second.origin, 'not-the-token')).toBe(401);
    await second.stop();
    await expectNoneLeft(dir);
  });

  it('`pty-ws token` makes a new one: the running server takes it within a second and refuses the old one; a restart keeps the new one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pty-ws-devtoken-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // A router killed after its stop's grace leaves its PTY host and shell, by design: end them first.
    cleanups.push(() => endAnyOrphans(dir));
    const server = await start(dir);
    const old = /dev token:\s+(\S+)/.exec(server.stdout())![1]!;
    const open = await TestClient.connect(server.attachUrl, { token: old });
    cleanups.push(() => open.close());
    await open.join({ role: 'observer' });

    const rotate = runCli(['token', '--state-dir', join(dir, 'state')], { HOME: dir, ...KEEP });
    expect(await rotate.exited).toBe(0);
    const fresh = /dev token:\s+(\S+)/.exec(rotate.stdout())![1]!;
    expect(fresh).not.toBe(old);
    // The page URL of the server running on that state directory (port 0: not the default 8121).
    expect(rotate.stdout()).toContain(`web page:    ${server.origin}/#token=${fresh}`);
    expect(rotate.stderr()).toMatch(/previous dev token is refused/);
    expect(statSync(join(dir, 'state', 'dev-token.json')).mode & 0o777).toBe(0o600);
    await until(async () => (await sessionsStatus(server.origin, fresh)) === 200, 'the new token to be accepted', 5000);
    expect(await sessionsStatus(server.origin, old)).toBe(401);
    await joins(server.attachUrl, fresh);
    // A connection opened with the old token keeps its principal (as a token map reload does).
    expect(open.closed).toBeNull();
    open.close();
    await server.stop();

    // No server runs there now: the configured address, and a word that it is only that.
    const stopped = runCli(['token', '--state-dir', join(dir, 'state'), '--port', '8999'], { HOME: dir, ...KEEP });
    expect(await stopped.exited).toBe(0);
    expect(stopped.stdout()).toMatch(/web page: +http:\/\/127\.0\.0\.1:8999\/#token=/);
    expect(stopped.stderr()).toMatch(/no pty-ws server runs on/);
    const newest = /dev token:\s+(\S+)/.exec(stopped.stdout())![1]!;

    const again = await start(dir);
    expect(await sessionsStatus(again.origin, newest)).toBe(200);
    expect(await sessionsStatus(again.origin, fresh)).toBe(401);
    await again.stop();
    await expectNoneLeft(dir);
  });

  it('per-start (PTY_WS_DEV_TOKEN_POLICY) makes a new token at every start and stores nothing; `pty-ws token` says it is unused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pty-ws-devtoken-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // A router killed after its stop's grace leaves its PTY host and shell, by design: end them first.
    cleanups.push(() => endAnyOrphans(dir));
    const env = { HOME: dir, PTY_WS_DEV_TOKEN_POLICY: 'per-start' };
    const child = runCli(['serve', '--port', '0', '--state-dir', join(dir, 'state')], env);
    cleanups.push(() => child.stop());
    const token = await until(() => /dev token:\s+(\S+)/.exec(child.stdout())?.[1], 'the dev token', 60_000);
    expect(child.stdout()).toMatch(/a new one each start/);
    expect(() => statSync(join(dir, 'state', 'dev-token.json'))).toThrow(/ENOENT/);
    expect(token.length).toBeGreaterThan(20);
    await child.stop();
    const rotate = runCli(['token', '--state-dir', join(dir, 'state')], env);
    expect(await rotate.exited).toBe(2);
    expect(rotate.stderr()).toMatch(/per-start/);
  });
});
