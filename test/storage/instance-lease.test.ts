// Many routers on one libSQL server (a real sqld), as real `pty-ws serve` processes: instances
// starting at the same moment all come up (migrations do not race), and one instance id is served
// by one router at a time (the lease), which a dead holder gives up once its lease expires.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../storage/open.ts';
import { endOrphans } from '../helpers/leftovers.ts';
import { runCli, startRouterProcess, type Child, type RouterProcess } from '../helpers/processes.ts';
import { startSqld, type Sqld } from '../helpers/sqld.ts';

const LEASE_MS = 2000;
let root: string;
let sqld: Sqld;
let env: Record<string, string>;
const children: Child[] = [];
let dirs = 0;
const stateDir = () => join(root, `state-${++dirs}`);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'pty-ws-lease-'));
  sqld = await startSqld(root);
  env = { PTY_WS_DATABASE_URL: sqld.httpUrl, PTY_WS_DATABASE_AUTH_TOKEN: sqld.authToken, PTY_WS_INSTANCE_LEASE_MS: String(LEASE_MS) };
});

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  await sqld?.stop();
  // A router that lost its lease, or was SIGKILLed, leaves its PTY host running by design.
  await endOrphans(root);
  rmSync(root, { recursive: true, force: true });
});

async function router(instance: string, dir = stateDir(), leaseMs = LEASE_MS): Promise<RouterProcess> {
  const r = await startRouterProcess({ 'state-dir': dir, 'instance-id': instance }, { ...env, PTY_WS_INSTANCE_LEASE_MS: String(leaseMs) });
  children.push(r);
  return r;
}

/** `pty-ws serve` that is expected to refuse: its exit status and what it said (one that starts is stopped after 30 s). */
async function refused(instance: string, dir = stateDir()): Promise<{ code: number | null; stderr: string }> {
  const c = runCli(['serve', '--port', '0', '--state-dir', dir, '--instance-id', instance], env);
  children.push(c);
  const timer = setTimeout(() => void c.stop(), 30_000);
  const code = await c.exited;
  clearTimeout(timer);
  return { code, stderr: c.stderr() };
}

describe('migrations', () => {
  it('five stores opened at the same moment on a new libSQL server database all open, with one schema', async () => {
    const dir = join(root, 'race');
    mkdirSync(dir);
    const fresh = await startSqld(dir);
    try {
      // In one process, so the five really migrate at once: each reads "nothing applied" first.
      const stores = await Promise.all(Array.from({ length: 5 }, () => openStore({ url: fresh.httpUrl, authToken: fresh.authToken })));
      await Promise.all(stores.map((s) => s.close()));
      const db = createClient({ url: fresh.httpUrl, authToken: fresh.authToken });
      const applied = await db.execute('select count(*) as n from __drizzle_migrations');
      const journal = JSON.parse(readFileSync(new URL('../../storage/migrations/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] };
      expect(Number(applied.rows[0]!.n)).toBe(journal.entries.length);
      db.close();
    } finally {
      await fresh.stop();
    }
  }, 60_000);
});

describe('instances on one libSQL server', () => {
  it('three started at the same moment on a new database all come up', async () => {
    const three = await Promise.all(['alpha', 'beta', 'gamma'].map((id) => router(id)));
    for (const r of three) expect((await fetch(`${r.origin}/readyz`)).status).toBe(200);
    const rows = await createClient({ url: sqld.httpUrl, authToken: sqld.authToken }).execute('select instance_id from instance_leases order by instance_id');
    expect(rows.rows.map((r) => r.instance_id)).toEqual(['alpha', 'beta', 'gamma']);
  }, 60_000);

  it('a second router for the same instance id refuses to start, naming the holder', async () => {
    const first = await router('delta');
    const second = await refused('delta');
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(new RegExp(`instance delta is served by another pty-ws router on this database \\(pid ${first.proc.pid}, state directory /\\S+, since \\S+, lease renewed until \\S+\\)`));
    expect((await fetch(`${first.origin}/readyz`)).status).toBe(200);

    // A clean stop frees the lease at once.
    await first.stop();
    const next = await router('delta');
    expect((await fetch(`${next.origin}/readyz`)).status).toBe(200);
  }, 60_000);

  // Long enough for a refused router to get to its lease check on a loaded machine.
  const AGAIN_LEASE_MS = 25_000;
  it("a SIGKILLed holder's lease expires; on its own state directory the next router takes it at once", async () => {
    const dir = stateDir();
    const first = await router('epsilon', dir, 600_000);
    first.proc.kill('SIGKILL');
    await first.exited;
    // Its lease runs for minutes, but the lock of its state directory is free now, which proves
    // the holder gone: the next router there takes the instance at once.
    const again = await router('epsilon', dir, AGAIN_LEASE_MS);
    again.proc.kill('SIGKILL');
    await again.exited;
    const killedAt = Date.now();
    // From another directory: refused while the dead holder's lease runs, served once it expired.
    const early = await refused('epsilon');
    expect(Date.now() - killedAt).toBeLessThan(AGAIN_LEASE_MS);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain(`instance epsilon is served by another pty-ws router on this database (pid ${again.proc.pid}`);
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + AGAIN_LEASE_MS - Date.now())));
    const taken = await router('epsilon');
    expect((await fetch(`${taken.origin}/readyz`)).status).toBe(200);
  }, 180_000);

  it('a holder whose lease was taken over stops serving', async () => {
    const first = await router('zeta');
    // Its heartbeat stops (SIGSTOP) past the lease; another router takes the instance meanwhile.
    first.proc.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, LEASE_MS + 200));
    const second = await router('zeta');
    first.proc.kill('SIGCONT');
    expect(await first.exited).toBe(1);
    expect(first.stderr()).toContain('lost the lease on instance zeta: another router took it over');
    expect((await fetch(`${second.origin}/readyz`)).status).toBe(200);
  }, 60_000);
});
