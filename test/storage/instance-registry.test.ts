// The instance registry on a real libSQL file (src/services/instance-registry.ts over
// storage/instance-registry.ts): what a heartbeat writes, when an instance reads unreachable, a
// clean stop, a row removed under a running instance, and which sessions the fleet lists.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import { drizzle } from 'drizzle-orm/libsql';
import { migrate } from 'drizzle-orm/libsql/migrator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HEARTBEAT_MISSES } from '../../src/core/config.ts';
import { uuidv7 } from '../../src/core/ids.ts';
import { instanceInfo, isReachable, startHeartbeat, type Heartbeat } from '../../src/services/instance-registry.ts';
import type { Logger } from '../../src/ports/logger.ts';
import type { SessionRecord } from '../../src/ports/store.ts';
import { migrationsFolder } from '../../storage/migrate.ts';
import { openStore } from '../../storage/open.ts';
import type { LibsqlStore } from '../../storage/store.ts';
import { startSqld } from '../helpers/sqld.ts';
import { until } from '../helpers/wait.ts';

const INTERVAL = 50;
const logs: string[] = [];
const logger: Logger = { log: (level, msg, fields) => void logs.push(JSON.stringify({ level, msg, ...fields })), child: () => logger };
let dir: string;
let url: string;
let store: LibsqlStore;
let now: number;
const clock = { now: () => now };
const beats: Heartbeat[] = [];

const heartbeat = async (instanceId: string, baseUrl = 'https://door.example') => {
  const h = await startHeartbeat({ store: store.instances, instanceId, baseUrl, version: '9.9.9', intervalMs: INTERVAL, clock, logger });
  beats.push(h);
  return h;
};
const row = async (id: string) => (await store.instances.list()).find((r) => r.instanceId === id);

function session(instanceId: string, createdAt: string): SessionRecord {
  return {
    id: uuidv7(),
    instanceId,
    backend: 'native',
    sessionClass: 'interactive',
    argv: null,
    command: null,
    cwd: null,
    env: {},
    cols: 80,
    rows: 24,
    label: null,
    state: 'created',
    createdAt,
    closedAt: null,
    exitCode: null,
    closeReason: null,
    createdBy: null,
    hadMember: false,
    createdVia: null,
  host: null,
  };
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-registry-'));
  url = `file:${join(dir, 'db.sqlite')}`;
  store = await openStore({ url });
  now = Date.parse('2026-12-03T12:00:00.000Z');
});

afterEach(async () => {
  await Promise.all(beats.splice(0).map((h) => h.stop()));
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the instance registry', () => {
  it('registers an instance at start and moves last_seen_at with each beat; stale after HEARTBEAT_MISSES intervals', async () => {
    const started = now;
    await heartbeat('alpha');
    const first = (await row('alpha'))!;
    expect(first).toEqual({ instanceId: 'alpha', owner: expect.any(String), baseUrl: 'https://door.example', version: '9.9.9', startedAt: new Date(started).toISOString(), lastSeenAt: started, heartbeatMs: INTERVAL, stoppedAt: null });
    expect(instanceInfo(first, started)).toEqual({
      instance_id: 'alpha',
      base_url: 'https://door.example',
      version: '9.9.9',
      started_at: '2026-12-03T12:00:00.000Z',
      last_seen_at: '2026-12-03T12:00:00.000Z',
      reachable: true,
    });
    // Judged by the writer's own interval.
    expect(isReachable(first, started + INTERVAL * HEARTBEAT_MISSES)).toBe(true);
    expect(isReachable(first, started + INTERVAL * HEARTBEAT_MISSES + 1)).toBe(false);

    now += 10_000;
    const moved = await until(async () => ((await row('alpha'))?.lastSeenAt === now ? row('alpha') : undefined), 'a heartbeat at the new time');
    expect(moved?.startedAt).toBe(new Date(started).toISOString());
    expect(isReachable(moved!, now)).toBe(true);
  });

  it('a clean stop reads unreachable at once; the next start clears it with a new started_at', async () => {
    const h = await heartbeat('beta');
    await h.stop();
    const stopped = (await row('beta'))!;
    expect(stopped.stoppedAt).toBe(now);
    expect(isReachable(stopped, now)).toBe(false);
    // Stopped means no more beats.
    const seen = stopped.lastSeenAt;
    now += 1000;
    await new Promise((r) => setTimeout(r, INTERVAL * 3));
    expect((await row('beta'))!.lastSeenAt).toBe(seen);

    await heartbeat('beta', 'http://127.0.0.1:9');
    const again = (await row('beta'))!;
    expect(again).toMatchObject({ stoppedAt: null, baseUrl: 'http://127.0.0.1:9', startedAt: new Date(now).toISOString() });
    expect(isReachable(again, now)).toBe(true);
  });

  it('a row removed under a running instance is written again by its next beat', async () => {
    await heartbeat('gamma');
    const db = createClient({ url });
    await db.execute("delete from instances where instance_id = 'gamma'");
    db.close();
    expect(await row('gamma')).toBeUndefined();
    const back = await until(() => row('gamma'), 'the row written again');
    expect(isReachable(back, now)).toBe(true);
  });

  it("a run that lost its lease leaves its successor's row alone: no beat, no restore, no stop mark", async () => {
    const old = await heartbeat('delta', 'http://old.example');
    // Another router took the instance over (it holds the lease now) and registered itself.
    await heartbeat('delta', 'http://new.example');
    const successor = (await row('delta'))!;
    now += 5000;
    await new Promise((r) => setTimeout(r, INTERVAL * 4));
    await old.stop();
    const after = (await row('delta'))!;
    expect(after).toMatchObject({ owner: successor.owner, baseUrl: 'http://new.example', stoppedAt: null });
    expect(isReachable(after, now)).toBe(true);
  });

  it('the fleet lists the sessions of registered instances only, oldest first', async () => {
    await heartbeat('alpha');
    await heartbeat('beta');
    const a = session('alpha', '2026-12-03T12:00:02.000Z');
    const b = session('beta', '2026-12-03T12:00:01.000Z');
    const stranger = session('never-registered', '2026-12-03T12:00:00.000Z');
    for (const s of [a, b, stranger]) await store.createSession(s);
    expect((await store.instances.registeredSessions()).map((s) => s.id)).toEqual([b.id, a.id]);
    expect(await store.instances.registeredSessions()).toContainEqual(a);
  });
});

describe('migration 0005_instances', () => {
  it('a libSQL server database of the previous release, upgraded by five routers at the same moment: each opens, the rows stay', async () => {
    const root = mkdtempSync(join(tmpdir(), 'pty-ws-upgrade-'));
    const sqld = await startSqld(root);
    try {
      // The migrations before this one, as the previous release shipped them.
      const journal = JSON.parse(readFileSync(join(migrationsFolder(), 'meta/_journal.json'), 'utf8')) as { entries: Array<{ tag: string }> };
      const upTo = journal.entries.findIndex((e) => e.tag === '0005_instances');
      expect(upTo).toBeGreaterThan(0);
      const previous = join(root, 'previous');
      mkdirSync(join(previous, 'meta'), { recursive: true });
      const entries = journal.entries.slice(0, upTo);
      writeFileSync(join(previous, 'meta/_journal.json'), JSON.stringify({ ...journal, entries }));
      for (const e of entries) copyFileSync(join(migrationsFolder(), `${e.tag}.sql`), join(previous, `${e.tag}.sql`));
      const client = createClient({ url: sqld.httpUrl, authToken: sqld.authToken });
      const db = drizzle(client);
      await migrate(db, { migrationsFolder: previous });
      const kept = session('alpha', '2026-12-01T00:00:00.000Z');
      // Only the columns that release had: this one's schema has more, which drizzle would name.
      await client.execute({
        sql: 'insert into sessions (id, instance_id, backend, session_class, env, cols, rows, state, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        args: [kept.id, kept.instanceId, kept.backend, kept.sessionClass, JSON.stringify(kept.env), kept.cols, kept.rows, kept.state, kept.createdAt],
      });

      // In one process, so the five really migrate at once: each reads "0003 is the last" first.
      const stores = await Promise.all(Array.from({ length: 5 }, () => openStore({ url: sqld.httpUrl, authToken: sqld.authToken })));
      expect(Number((await client.execute('select count(*) as n from __drizzle_migrations')).rows[0]!.n)).toBe(journal.entries.length);
      expect(await stores[0]!.getSession('alpha', kept.id)).toEqual(kept);
      await Promise.all(stores.map((s) => s.close()));
      client.close();
    } finally {
      await sqld.stop();
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
