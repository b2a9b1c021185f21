// A full disk under the database: REST says so by name (507 storage_full), not an opaque 500, and
// the server lives on and works again once there is room (docs/security.md, item 9). A real libSQL
// file on a real 4 MiB tmpfs, filled by a file; mounting needs root.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IS_ROOT } from '../helpers/local-user.ts';
import { TestClient } from '../helpers/client.ts';
import { until } from '../helpers/processes.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let base: string;
let mount: string;
let server: TestServer | undefined;

beforeAll(async () => {
  if (!IS_ROOT) return;
  base = mkdtempSync(join(tmpdir(), 'pty-ws-full-'));
  mount = join(base, 'disk');
  mkdirSync(mount);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', mount]);
  server = await startTestServer({}, { 'database-url': `file:${mount}/pty-ws.db` });
}, 60_000);

afterAll(async () => {
  if (!IS_ROOT) return;
  await server?.stop();
  execFileSync('umount', ['-l', mount]);
  rmSync(base, { recursive: true, force: true });
});

/** Fills the disk to the last byte with one file. */
function fill(file: string): void {
  const chunk = Buffer.alloc(64 * 1024, 1);
  for (let size = chunk.length; size >= 1; size = Math.floor(size / 2)) {
    try {
      for (;;) writeFileSync(file, chunk.subarray(0, size), { flag: 'a' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
    }
  }
}

describe.skipIf(!IS_ROOT)('a full disk under the database (skipped unless root: needs to mount a tmpfs)', () => {
  it('answers POST /sessions with 507 STORAGE_FULL naming the problem, and works again once there is room', async () => {
    const rest = new Rest(server!.origin, server!.devToken);
    await rest.create({ label: 'before' });
    const filler = join(mount, 'filler');
    fill(filler);

    const full = await rest.request('POST', '', { label: 'while full' });
    expect(full.status).toBe(507);
    expect(full.json.error).toMatchObject({ code: 'storage_full', message: expect.stringContaining("the database's disk is full: the change was not stored") });

    rmSync(filler);
    await rest.create({ label: 'after' });
    const labels = ((await rest.request('GET', '')).json.sessions as Array<{ label: string }>).map((s) => s.label);
    expect(labels).toEqual(expect.arrayContaining(['before', 'after']));
    expect(labels).not.toContain('while full');
  });

  it('answers a write at once while log commits are retried, and /readyz says STORAGE_FULL until a write gets through', { timeout: 60_000 }, async () => {
    const rest = new Rest(server!.origin, server!.devToken);
    const { session_id: id } = await server!.createSession({ command: 'i=0; while :; do i=$((i+1)); echo chatty-$i; sleep 0.02; done' });
    const client = await TestClient.connect(server!.attachUrl(id), { token: server!.devToken });
    await client.join({ role: 'controller' });
    await client.waitForOutput('chatty-3');
    const filler = join(mount, 'filler');
    const logged = (text: string): boolean => server!.logs.some((l) => l.includes(text));
    try {
      fill(filler);
      await client.waitFor(() => logged('log commit failed, retrying'), 'a log commit to fail', 20_000);
      // Behind the log's retries (4.25 s a batch) it would only be answered once they ran out.
      const full = await rest.request('POST', '', { label: 'while full' });
      expect(full.status).toBe(507);
      expect(full.json.error).toMatchObject({ code: 'storage_full' });
      expect(logged('dropping log frames after repeated commit failures')).toBe(false);
      const ready = await fetch(`${server!.origin}/readyz`);
      expect(ready.status).toBe(503);
      expect(JSON.stringify(await ready.json())).toContain("STORAGE_FULL: the database's disk is full");
    } finally {
      rmSync(filler, { force: true });
    }
    await until(async () => (await fetch(`${server!.origin}/readyz`)).status === 200, '/readyz ready again once a log commit got through');
    client.close();
  });

  it('a router started on the full disk says what to free, with the sizes it found', { timeout: 60_000 }, async () => {
    const dir = server!.dir;
    await server!.stop({ keepDir: true });
    server = undefined;
    const filler = join(mount, 'filler');
    fill(filler);
    try {
      const failed = await startTestServer({}, { 'database-url': `file:${mount}/pty-ws.db` }, { dir }).then(
        async (s) => {
          await s.stop();
          return undefined;
        },
        (e: unknown) => e as Error,
      );
      expect(failed?.message).toMatch(new RegExp(`the disk holding the database is full: ${mount}/pty-ws\\.db is \\d+\\.\\d MiB \\(its -wal \\d+\\.\\d MiB\\) and its filesystem has \\d+ bytes free of 4\\.0 MiB\\. Free at least 8\\.0 MiB`));
    } finally {
      rmSync(filler, { force: true });
    }
    // With room again it starts, on the same database.
    server = await startTestServer({}, { 'database-url': `file:${mount}/pty-ws.db` }, { dir });
  });
});
