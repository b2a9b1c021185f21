// The default session of `pty-ws start` across restarts on one state directory: on tmux (when the
// PTY host has it) the shell outlives the router and the next start takes it up again, cwd and
// all, and `pty-ws attach` rejoins it by itself; without tmux it is native, ends with the router,
// and the next start makes a new one. The dev token may end it.
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer, stopWithMultiplexers, type TestServer } from '../helpers/server.ts';
import { Tmux } from '../helpers/tmux.ts';

const AUTO = { PTY_WS_DEFAULT_SESSION_BACKEND: 'auto' };
const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;
const servers: TestServer[] = [];
const dirs: string[] = [];
let tmux: Tmux | null = null;

afterEach(async () => {
  await tmux?.kill();
  tmux = null;
  for (const s of servers.splice(0)) await stopWithMultiplexers(s);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The first start on a new dir, with its default session; stopped with its multiplexers after the test. */
async function first(env: Record<string, string>): Promise<TestServer> {
  const s = await startTestServer(env);
  servers.push(s);
  return s;
}

/**
 * Stops `s` and starts on its dir again as `pty-ws start` does (on the same port with `samePort`);
 * the new one replaces it for the clean-up.
 */
async function restart(s: TestServer, env: Record<string, string>, samePort = false): Promise<TestServer> {
  servers.splice(servers.indexOf(s), 1);
  await s.stop({ keepDir: true });
  const again = await startTestServer(env, samePort ? { port: String(s.port) } : {}, { dir: s.dir, defaultSession: true });
  servers.push(again);
  return again;
}

async function shell(s: TestServer, id: string): Promise<TestClient> {
  const c = await TestClient.connect(s.attachUrl(id), { token: s.devToken });
  await c.join({ role: 'controller' });
  return c;
}

/** Runs `command` in the shell and waits for `at:<its output>:ta` (the echoed command line never matches). */
async function run(c: TestClient, command: string, expected: string): Promise<void> {
  c.send('pty.session_input', { data: b64(`echo "at:$(${command}):ta"\r`) });
  await c.waitFor(() => c.output().includes(`at:${expected}:ta`), `at:${expected}:ta`, 15_000);
}

/** A PATH with what a PTY host needs (perl for its fd closer) and no tmux or screen: a machine without them. */
function pathWithoutMultiplexers(): string {
  const bin = mkdtempSync(join(tmpdir(), 'pty-ws-bin-'));
  dirs.push(bin);
  for (const tool of ['perl', 'sh', 'env']) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
  return bin;
}

describe('the default session across restarts', () => {
  it('runs on tmux when the PTY host has it: a restart takes up the same shell, its cwd kept', async () => {
    const a = await first(AUTO);
    const id = a.defaultSession!.id;
    expect((await new Rest(a.origin, a.devToken).get(id)).session_backend).toBe('tmux');
    const c = await shell(a, id);
    c.send('pty.session_input', { data: b64('cd /tmp\r') });
    await run(c, 'pwd', '/tmp');
    c.close();

    const b = await restart(a, AUTO);
    expect(b.defaultSession!.id).toBe(id);
    const again = await shell(b, id);
    await run(again, 'pwd', '/tmp');
    again.close();
    const listed = await new Rest(b.origin, b.devToken).request('GET', '');
    expect((listed.json.sessions as Array<{ label: string | null; state: string; default_session?: true }>).map((s) => [s.label, s.state, s.default_session])).toEqual([['default', 'running', true]]);
  });

  it('pty-ws attach (in a terminal) rejoins it by itself after the restart', async () => {
    // The dev token survives the restart, as with `npm start`.
    const env = { ...AUTO, PTY_WS_DEV_TOKEN_POLICY: 'keep' };
    const a = await first(env);
    const id = a.defaultSession!.id;
    tmux = await Tmux.start(`${process.execPath} ${BIN} attach ${a.attachUrl(id)} --token ${a.devToken}`);
    await tmux.waitFor('#');
    // Done before the restart: input still in flight when the router stops may be lost.
    await tmux.type('cd /tmp && echo "be:$(pwd):fore"');
    await tmux.waitFor(/^be:\/tmp:fore$/m);
    await restart(a, env, true);
    await tmux.type('echo "at:$(pwd):ta"');
    await tmux.waitFor(/^at:\/tmp:ta$/m, 30_000);
    expect(await tmux.screen()).not.toContain('session ended');
  });

  it('is native without tmux: it ends with the router, and the next start makes a new one', async () => {
    const saved = process.env.PATH;
    // The PTY host the router starts inherits this process's PATH and looks for tmux on it.
    process.env.PATH = pathWithoutMultiplexers();
    try {
      const a = await first({ ...AUTO, PATH: process.env.PATH });
      const id = a.defaultSession!.id;
      expect((await new Rest(a.origin, a.devToken).get(id)).session_backend).toBe('native');
      (await shell(a, id)).close();
      const b = await restart(a, { ...AUTO, PATH: process.env.PATH });
      expect(b.defaultSession!.id).not.toBe(id);
      const old = await new Rest(b.origin, b.devToken).get(id);
      expect([old.state, old.close_reason]).toEqual(['closed', 'instance_terminated']);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('is reused while nobody has started it; one of another backend is ended instead', async () => {
    const a = await first({});
    const id = a.defaultSession!.id;
    const b = await restart(a, {});
    expect(b.defaultSession!.id).toBe(id);
    // Now tmux is wanted: the unstarted native one gives way to a tmux one.
    const c = await restart(b, AUTO);
    expect(c.defaultSession!.id).not.toBe(id);
    const rest = new Rest(c.origin, c.devToken);
    expect((await rest.get(id)).state).toBe('closed');
    expect((await rest.get(c.defaultSession!.id)).session_backend).toBe('tmux');
  });
});

describe('ending the default session', () => {
  it('the dev token may; a share of it may not, watch or pair', async () => {
    const s = await first({});
    const id = s.defaultSession!.id;
    const rest = new Rest(s.origin, s.devToken);
    (await shell(s, id)).close();
    const shares = await Promise.all(
      ['pty:observe', 'pty:control'].map(async (scope) => (await rest.request('POST', `/${id}/shares`, { scope })).json.token as string),
    );
    for (const token of shares) expect(await new Rest(s.origin, token).delete(id)).toBe(403);
    expect(await rest.delete(id)).toBe(202);
    await expect.poll(async () => (await rest.get(id)).state).toBe('closed');
  });
});
