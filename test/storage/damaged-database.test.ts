// A damaged database or WAL stops the start with an error naming the file (docs/security.md, item
// 9): not a raw failed query, not an orphaned PTY host, not a silent start on an older or empty log.
// A real log written by the real router, damaged on disk, then the real CLI started on it.
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.ts';
import { runCli, startPtyHostProcess, startRouterProcess, until } from '../helpers/processes.ts';

let dir: string;
let state: string;
let db: string;
const stops: Array<() => Promise<void>> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-damaged-'));
  state = join(dir, 'state');
  db = join(state, 'pty-ws.db');
});

afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A log with a session's output in it, left as a router SIGKILLed mid-run leaves it: in the WAL. */
async function writeLog(): Promise<void> {
  const socket = join(dir, 'host.sock');
  const host = await startPtyHostProcess(socket);
  stops.push(() => host.stop());
  const router = await startRouterProcess({ 'state-dir': state, 'pty-socket': socket }, { HOME: dir });
  stops.push(() => router.stop());
  const { session_id: id } = await router.createSession({ command: "/bin/sh -c 'seq 1 5000; sleep 60'" });
  // A session starts at its first join.
  const c = await TestClient.connect(router.attachUrl(id), { token: router.token });
  await c.join();
  // `seq` may print everything before the join is admitted: then only the join's Keyframe shows it.
  await c.waitFor(() => c.output().includes('\n5000') || c.screen().includes('5000'), 'the last line on the screen');
  const reader = createClient({ url: `file:${db}` });
  await until(async () => Number((await reader.execute('select count(*) from session_log')).rows[0]![0]) > 0, 'the output in the log');
  reader.close();
  c.close();
  router.proc.kill('SIGKILL');
  await router.exited;
  await host.stop();
}

/** Folds the WAL into the file, as a clean stop does (else SQLite reads the newer pages from the WAL). */
async function checkpoint(): Promise<{ pageSize: number; logRoot: number }> {
  const client = createClient({ url: `file:${db}` });
  try {
    await client.execute('PRAGMA wal_checkpoint(TRUNCATE)');
    const logRoot = Number((await client.execute("select rootpage from sqlite_master where name = 'session_log'")).rows[0]![0]);
    const pageSize = Number((await client.execute('PRAGMA page_size')).rows[0]![0]);
    return { pageSize, logRoot };
  } finally {
    client.close();
  }
}

/** The first frame of the WAL's current generation that a later commit frame follows, and its offset. */
function frameBeforeACommit(wal: Buffer): { frame: number; offset: number } {
  const pageSize = wal.readUInt32BE(8);
  const salts = wal.readBigUInt64BE(16);
  const frames: Array<{ offset: number; commit: boolean }> = [];
  for (let off = 32; off + 24 + pageSize <= wal.length && wal.readBigUInt64BE(off + 8) === salts; off += 24 + pageSize) {
    frames.push({ offset: off, commit: wal.readUInt32BE(off + 4) !== 0 });
  }
  const lastCommit = frames.map((f) => f.commit).lastIndexOf(true);
  if (lastCommit < 1) throw new Error(`the WAL's current generation has no commit after its first frame (${frames.length} frames): nothing to damage`);
  return { frame: 1, offset: frames[0]!.offset };
}

function overwrite(file: string, offset: number, length: number): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(length, 0xa5), 0, length, offset);
  closeSync(fd);
}

/** Pids of processes still serving a PTY host on a socket under this test's directory. */
function hostsLeft(): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(`--socket\0${state}/`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Starts the CLI on the damaged state: it must exit on its own (a banner means it started anyway). */
async function startOnDamage(): Promise<{ code: number | null; stderr: string }> {
  const cli = runCli(['start', '--port', '0', '--state-dir', state], { HOME: dir });
  stops.push(() => cli.stop());
  const outcome = await until(() => (cli.proc.exitCode !== null ? 'exited' : cli.stdout().includes('listening on') ? 'started' : undefined), 'the CLI to exit', 30_000);
  expect(outcome, `started on a damaged database; stderr:\n${cli.stderr()}`).toBe('exited');
  return { code: await cli.exited, stderr: cli.stderr() };
}

// retry: under load the set-up run (a router killed mid-run, its WAL left behind) sometimes leaves no
// damage where the test expects it, or its session prints nothing within the wait; see the issue 17
// closing note. A damaged database that is not refused fails every try.
describe('a damaged database at start', { retry: 2 }, () => {
  it('a WAL damaged before its last commits: exits non-zero naming the WAL, starts no PTY host', { timeout: 90_000 }, async () => {
    await writeLog();
    // Into the page of a frame that a later commit of the same WAL generation follows: SQLite
    // would drop that commit. (Which frame that is depends on when the router's checkpoints reset
    // the WAL, so it is found, not assumed.)
    const { frame, offset } = frameBeforeACommit(readFileSync(`${db}-wal`));
    overwrite(`${db}-wal`, offset + 24 + 100, 512);

    const { code, stderr } = await startOnDamage();
    expect(code).not.toBe(0);
    expect(stderr).toContain(`pty-ws: cannot use the database file:${db}: its write-ahead log ${db}-wal is damaged: frame ${frame} is damaged, and SQLite would drop every transaction committed after it`);
    expect(hostsLeft()).toEqual([]);
  });

  it('a damaged page of the log table: exits non-zero naming the file, starts no PTY host', { timeout: 90_000 }, async () => {
    await writeLog();
    const { pageSize, logRoot } = await checkpoint();
    overwrite(db, (logRoot - 1) * pageSize, pageSize);

    const { code, stderr } = await startOnDamage();
    expect(code).not.toBe(0);
    expect(stderr).toContain(`pty-ws: cannot use the database file:${db}: the file is damaged`);
    expect(stderr).not.toContain('Failed query');
    expect(hostsLeft()).toEqual([]);
  });

  it('a file that is not a database at all: exits non-zero naming it', { timeout: 60_000 }, async () => {
    await writeLog();
    await checkpoint();
    overwrite(db, 0, 100);
    const { code, stderr } = await startOnDamage();
    expect(code).not.toBe(0);
    expect(stderr).toContain(`pty-ws: cannot use the database file:${db}: the file is damaged`);
    expect(hostsLeft()).toEqual([]);
  });
});
