// Other local users must not read the replay log (docs/security.md, item 3): the state directory,
// the database, its WAL/SHM and the PTY host socket are private, fixed loudly at start when they
// are not, and refused when they belong to someone else. The real CLI, a real second user.
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IS_ROOT, localUser, NEEDS_ROOT, type LocalUser } from '../helpers/local-user.ts';
import { runCli, startRouterProcess, until, type RouterProcess } from '../helpers/processes.ts';

let base: string;
let other: LocalUser;
const routers: Array<Pick<RouterProcess, 'stop'>> = [];

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'pty-ws-private-'));
  // The other user may walk up to the files: only their own modes can stop them.
  chmodSync(base, 0o755);
  other = localUser();
});

afterEach(async () => {
  for (const r of routers.splice(0)) await r.stop();
  rmSync(base, { recursive: true, force: true });
});

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8).padStart(4, '0');
const SECRET = 'hunter2-printed-in-a-terminal';

/** Serves on `stateDir` (plus `env`), then prints the secret in a session and waits until the log holds it. */
async function serveAndPrintSecret(stateDir: string, databaseFile: string, env: Record<string, string> = {}): Promise<RouterProcess> {
  const router = await startRouterProcess({ 'state-dir': stateDir }, { HOME: base, ...env });
  routers.push(router);
  await router.createSession({ command: `/bin/sh -c 'echo ${SECRET}; sleep 60'` });
  // Held in the WAL until a checkpoint: the file another user would read.
  await until(() => [databaseFile, `${databaseFile}-wal`].some((f) => existsSync(f) && readFileSync(f).includes(SECRET)), 'the secret in the database files');
  return router;
}

function expectUnreadableByOther(files: string[]): void {
  for (const file of files) {
    const r = other.run(['cat', file]);
    expect(r.status, `${other.name} read ${file}`).not.toBe(0);
    expect(r.stderr).toMatch(/Permission denied/);
  }
}

const warnings = (router: RouterProcess) =>
  router
    .stderr()
    .split('\n')
    .filter((l) => l.includes('narrowed the permissions'))
    .map((l) => {
      const { path, was, now } = JSON.parse(l) as Record<string, unknown>;
      return { path, was, now };
    });

describe.skipIf(!IS_ROOT)(`private state files (skipped unless root: ${NEEDS_ROOT})`, () => {
  it('a 0755 state directory and a 0644 database from before are narrowed, logged, and unreadable by another user', async () => {
    const state = join(base, 'state');
    mkdirSync(state, { mode: 0o755 });
    chmodSync(state, 0o755);
    const db = join(state, 'pty-ws.db');
    closeSync(openSync(db, 'w', 0o644));
    chmodSync(db, 0o644);

    const router = await serveAndPrintSecret(state, db);
    expectUnreadableByOther([db, `${db}-wal`, `${db}-shm`]);
    expect(mode(state)).toBe('0700');
    for (const f of [db, `${db}-wal`, `${db}-shm`, join(state, 'pty-host.sock')]) expect(mode(f), f).toBe('0600');
    expect(warnings(router)).toEqual([
      { path: state, was: '0755', now: '0700' },
      { path: db, was: '0644', now: '0600' },
    ]);
  });

  it('a new database elsewhere (PTY_WS_DATABASE_URL) is created 0600 with its WAL, unreadable by another user', async () => {
    const elsewhere = join(base, 'shared-data');
    mkdirSync(elsewhere, { mode: 0o755 });
    chmodSync(elsewhere, 0o755);
    const db = join(elsewhere, 'log.db');
    await serveAndPrintSecret(join(base, 'state'), db, { PTY_WS_DATABASE_URL: `file:${db}` });
    expectUnreadableByOther([db, `${db}-wal`]);
    for (const f of [db, `${db}-wal`, `${db}-shm`]) expect(mode(f), f).toBe('0600');
    expect(mode(elsewhere)).toBe('0755');
  });

  it("a database or WAL of another user stops the start, naming it; so does a database in a directory anyone may write", async () => {
    const state = join(base, 'state');
    mkdirSync(state, { mode: 0o700 });
    const db = join(state, 'pty-ws.db');
    closeSync(openSync(`${db}-wal`, 'w', 0o666));
    chownSync(`${db}-wal`, other.uid, other.gid);
    let cli = runCli(['serve', '--port', '0', '--state-dir', state], { HOME: base });
    routers.push(cli);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain(`${db}-wal belongs to uid ${other.uid}, not to this user (uid 0)`);

    const open = join(base, 'open');
    mkdirSync(open, { mode: 0o777 });
    chmodSync(open, 0o777);
    cli = runCli(['serve', '--port', '0', '--state-dir', join(base, 'state2'), '--database-url', `file:${open}/x.db`], { HOME: base });
    routers.push(cli);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain(`${open} (the database's directory) is writable by other users (mode 0777)`);
    expect(existsSync(join(open, 'x.db'))).toBe(false);
  });
});
