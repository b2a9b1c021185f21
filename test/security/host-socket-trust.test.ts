// The router sends every keystroke to whoever listens on the PTY host socket (docs/security.md,
// item 4). Another local user who binds that path first, in a directory they may write, must get
// nothing: the router checks the socket and its directory before connecting and refuses.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IS_ROOT, localUser, NEEDS_ROOT, type LocalUser } from '../helpers/local-user.ts';
import { runCli, startPtyHostProcess, until, type Child } from '../helpers/processes.ts';

let base: string;
let other: LocalUser;
const children: Array<Pick<Child, 'stop'>> = [];
const listeners: ChildProcess[] = [];

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'pty-ws-socket-trust-'));
  chmodSync(base, 0o755);
  if (IS_ROOT) other = localUser();
});

afterEach(async () => {
  for (const c of children.splice(0)) await c.stop();
  for (const l of listeners.splice(0)) l.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

/** The other user listens on `socket` and reports every connection and byte it gets. */
async function impostor(socket: string): Promise<{ heard: () => string }> {
  const script = `
    const net = require('node:net');
    net.createServer((s) => {
      console.log('CONNECTED');
      s.on('data', (d) => console.log('DATA ' + d.length));
    }).listen(${JSON.stringify(socket)}, () => {
      require('node:fs').chmodSync(${JSON.stringify(socket)}, 0o777);
      console.log('LISTENING');
    });`;
  const proc = other.start([process.execPath, '-e', script]);
  listeners.push(proc);
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await until(() => out.includes('LISTENING'), `${other.name} listening on ${socket}`);
  return { heard: () => out };
}

async function serve(socket: string): Promise<{ code: number | null; stderr: string }> {
  const cli = runCli(['start', '--port', '0', '--state-dir', join(base, 'state'), '--pty-socket', socket], { HOME: base });
  children.push(cli);
  const code = await cli.exited;
  return { code, stderr: cli.stderr() };
}

describe.skipIf(!IS_ROOT)(`the PTY host socket (skipped unless root: ${NEEDS_ROOT})`, () => {
  it('bound first by another user in a shared directory (like /tmp): the router refuses and connects to nothing', async () => {
    const shared = join(base, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const socket = join(shared, 'pty-host.sock');
    const attacker = await impostor(socket);

    const { code, stderr } = await serve(socket);
    expect(attacker.heard()).not.toContain('CONNECTED');
    expect(code).not.toBe(0);
    expect(stderr).toContain(`refusing the PTY host socket ${socket}: its directory ${shared} is writable by other users (mode 01777)`);
  });

  it("bound by another user in their own directory: refused, naming the socket's owner", async () => {
    const theirs = join(base, 'theirs');
    mkdirSync(theirs, { mode: 0o755 });
    chownSync(theirs, other.uid, other.gid);
    const socket = join(theirs, 'pty-host.sock');
    const attacker = await impostor(socket);

    const { code, stderr } = await serve(socket);
    expect(attacker.heard()).not.toContain('CONNECTED');
    expect(code).not.toBe(0);
    expect(stderr).toContain(`refusing the PTY host socket ${socket}: its directory ${theirs} belongs to uid ${other.uid}, not to this user (uid 0)`);
  });
});

describe("the PTY host's socket directory", () => {
  it('a shared sticky directory (like /tmp) stops the host; write bits for others on our own are taken off, logged', async () => {
    const shared = join(base, 'sticky');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const refused = runCli(['pty-host', '--socket', join(shared, 'pty-host.sock')], { HOME: base });
    children.push(refused);
    expect(await refused.exited).not.toBe(0);
    expect(refused.stderr()).toContain(`${shared} (the PTY host socket's directory) is a shared directory (mode 01777)`);
    expect(statSync(shared).mode & 0o7777).toBe(0o1777);

    const ours = join(base, 'group-writable');
    mkdirSync(ours);
    chmodSync(ours, 0o775);
    const host = await startPtyHostProcess(join(ours, 'pty-host.sock'), { HOME: base });
    children.push(host);
    expect(statSync(ours).mode & 0o7777).toBe(0o755);
    expect(statSync(join(ours, 'pty-host.sock')).mode & 0o777).toBe(0o600);
    expect(host.stderr()).toMatch(/narrowed the permissions of the PTY host socket directory[^\n]*"was":"0775","now":"0755"/);
  });
});
