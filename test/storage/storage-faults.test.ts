// Database faults: at start (locked, unwritable, unreachable: a clear error and a non-zero exit)
// and while running (a write that keeps failing: logged, INTERNAL to the affected clients, and the
// sessions stream on).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../storage/open.ts';
import { TestClient, type Frame } from '../helpers/client.ts';
import { join as joinSession, logFramesOf, maxLoggedSequence } from '../helpers/log-rows.ts';
import { freePort, runCli, until } from '../helpers/processes.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
let dir: string;
const cleanups: Array<() => unknown> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-faults-'));
  chmodSync(dir, 0o755);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

// Permission bits do not stop root: as root, the server runs as `nobody` so read-only means
// read-only. That needs a checkout `nobody` can read (a clone under a 0700 directory is not).
const asRoot = process.getuid?.() === 0;
const nobodyCanRun = !asRoot || spawnSync('/bin/sh', ['-c', `test -r '${ROOT}bin/pty-ws.js'`], { uid: 65534, gid: 65534 }).status === 0;

describe.skipIf(!nobodyCanRun)(`a database that cannot be used at start${nobodyCanRun ? '' : ' (skipped: user nobody cannot read this checkout)'}`, () => {
  const asUser = asRoot ? { uid: 65534, gid: 65534 } : {};
  const ownedByUser = (path: string): void => {
    if (asUser.uid !== undefined) chownSync(path, asUser.uid, asUser.gid);
  };

  async function serve(databaseUrl: string): Promise<{ code: number | null; stderr: string }> {
    const state = join(dir, 'state');
    mkdirSync(state, { recursive: true });
    ownedByUser(state);
    const child = runCli(['serve', '--port', '0', '--state-dir', state, '--database-url', databaseUrl], { HOME: state }, asUser);
    cleanups.push(() => child.stop());
    const code = await child.exited;
    return { code, stderr: child.stderr() };
  }

  it('that another process holds locked: says so, names it, exits non-zero', { timeout: 90_000 }, async () => {
    const url = `file:${join(dir, 'locked.db')}`;
    await (await openStore({ url })).close();
    ownedByUser(dir);
    ownedByUser(join(dir, 'locked.db'));
    // Another process takes the write lock and keeps it.
    const holder = spawn(process.execPath, ['--input-type=module', '-e', `
      import { createClient } from '@libsql/client';
      const client = createClient({ url: ${JSON.stringify(url)} });
      const tx = await client.transaction('write');
      await tx.execute('update sessions set id = id where 0');
      console.log('holding');
      // Both stay referenced: a collected connection is closed, and its lock goes with it.
      setInterval(() => void [client, tx], 1000);
    `], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    cleanups.push(() => holder.kill('SIGKILL'));
    await new Promise((resolve) => holder.stdout!.once('data', resolve));

    const { code, stderr } = await serve(url);
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(stderr).toContain(`pty-ws: cannot use the database ${url}: it is locked by another process`);
  });

  it('in a read-only directory: says it cannot be opened for writing, exits non-zero', async () => {
    const readOnly = join(dir, 'read-only');
    mkdirSync(readOnly, { mode: 0o555 });
    chmodSync(readOnly, 0o555);
    const url = `file:${join(readOnly, 'pty-ws.db')}`;
    const { code, stderr } = await serve(url);
    expect(code).not.toBe(0);
    expect(stderr).toContain(`pty-ws: cannot use the database ${url}: it cannot be opened for writing`);
  });

  it('in a read-only file: says it cannot be opened for writing, exits non-zero', async () => {
    const writableDir = join(dir, 'db');
    mkdirSync(writableDir);
    const file = join(writableDir, 'pty-ws.db');
    const url = `file:${file}`;
    await (await openStore({ url })).close();
    ownedByUser(writableDir);
    // The server's own files (another user's are refused before opening: test/security/private-state.test.ts).
    for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) ownedByUser(f);
    chmodSync(file, 0o444);
    const { code, stderr } = await serve(url);
    expect(code).not.toBe(0);
    expect(stderr).toContain(`pty-ws: cannot use the database ${url}: it cannot be opened for writing`);
  });

  it('on a server nobody listens on: says it cannot be reached, exits non-zero', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const { code, stderr } = await serve(url);
    expect(code).not.toBe(0);
    expect(stderr).toContain(`pty-ws: cannot use the database ${url}: the server cannot be reached`);
  });
});

describe('a log write that keeps failing while sessions run', () => {
  let server: TestServer;

  afterEach(async () => {
    await server?.stop();
  });

  const internalErrors = (c: TestClient): Frame[] => c.frames().filter((f) => f.op === 'Error' && f.payload.code === 'INTERNAL');
  const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  it('is logged, reaches the affected clients as INTERNAL, and the sessions stream on', { timeout: 40_000 }, async () => {
    server = await startTestServer();
    const ticker = await server.createSession({ command: 'i=0; while :; do i=$((i+1)); echo tick-$i; sleep 0.05; done' });
    const quiet = await server.createSession({ command: 'cat' });
    const controller = await TestClient.connect(server.attachUrl(ticker.session_id), { token: server.devToken });
    const controllerJoin = await joinSession(controller, { role: 'controller' }, { replay_from: 0 });
    const observer = await TestClient.connect(server.attachUrl(ticker.session_id), { token: server.devToken });
    await joinSession(observer, { role: 'observer' });
    const bystander = await TestClient.connect(server.attachUrl(quiet.session_id), { token: server.devToken });
    await joinSession(bystander, { role: 'controller' });
    await controller.waitForOutput('tick-3');
    // Waits for the write lock (the server commits the ticker's frames every ~50 ms): without it the
    // rename below failed SQLITE_BUSY now and then, when it met a commit (seen in a CI run).
    const db = createClient({ url: `file:${join(server.dir, 'pty-ws.db')}`, timeout: 5000 });
    cleanups.push(() => db.close());
    // The quiet session's frames are all committed: the fault cannot touch them.
    await until(async () => (await maxLoggedSequence(db, quiet.session_id)) >= 1, "the quiet session's join to be durable");

    // The fault: the log table vanishes under the server (a second connection renames it).
    await db.execute('alter table session_log rename to session_log_away');

    const [first] = await Promise.all([
      controller.waitFor(() => internalErrors(controller)[0], 'INTERNAL on the controller', 15_000),
      observer.waitFor(() => internalErrors(observer)[0], 'INTERNAL on the observer', 15_000),
    ]);
    expect(first.payload).toMatchObject({
      code: 'INTERNAL',
      retryable: true,
      message: expect.stringMatching(/^log frames? \d+(-\d+)? of this session could not be stored \(writing to the database kept failing\): a replay will skip (it|them)$/),
      a2a_error: { code: -32603, data: [{ reason: 'INTERNAL', metadata: { first_lost_sequence: expect.any(String), last_lost_sequence: expect.any(String) } }] },
    });
    expect(server.logs.some((l) => l.includes('"level":"error"') && l.includes('dropping log frames after repeated commit failures'))).toBe(true);
    // The Node router commits its log in a worker thread: the database's own error made it back.
    expect(server.logs.some((l) => l.includes('log commit failed') && l.includes('no such table: session_log'))).toBe(true);

    // The session never stopped: output keeps coming, and once the table is back it is logged again.
    const seenAtFault = controller.output().length;
    await controller.waitFor(() => controller.output().length > seenAtFault, 'more output during the fault');
    await db.execute('alter table session_log_away rename to session_log');
    const cursor = Math.max(...logFramesOf(controller, [controllerJoin]).map((f) => f.sequence));
    await until(async () => (await maxLoggedSequence(db, ticker.session_id)) > cursor, 'commits to succeed again');
    expect(bystander.frames().filter((f) => f.op === 'Error')).toEqual([]);
    const status = await fetch(`${server.origin}/agents/local/sessions/${ticker.session_id}`, { headers: { authorization: `Bearer ${server.devToken}` } });
    expect(await status.json()).toMatchObject({ state: 'running' });

    // A replay holds every frame but exactly the ones the INTERNAL errors named.
    const lost = new Set(
      internalErrors(controller).flatMap((f) => {
        const { metadata } = (f.payload.a2a_error as { data: Array<{ metadata: Record<string, string> }> }).data[0]!;
        return range(Number(metadata.first_lost_sequence), Number(metadata.last_lost_sequence));
      }),
    );
    expect(lost.size).toBeGreaterThan(0);
    const late = await TestClient.connect(server.attachUrl(ticker.session_id), { token: server.devToken });
    const lateJoin = await joinSession(late, { role: 'observer' }, { replay_from: 0 });
    const replayed = logFramesOf(late, [lateJoin]).map((f) => f.sequence);
    const upTo = replayed.at(-1)!;
    expect(replayed).toEqual(range(1, upTo).filter((n) => !lost.has(n)));
    for (const c of [controller, observer, bystander, late]) c.close();
  });
});

