// The client commands take a session by id prefix or label wherever they take an id, `sessions
// create --backend`, `sessions --help` (issue 21). Real `pty-ws` processes against the real
// server; `attach` by prefix in a real terminal (a private tmux server); a tmux-backed session.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionsApi } from '../../src/client/sessions-api.ts';
import { startTestServer, stopWithMultiplexers, type TestServer } from '../helpers/server.ts';
import { Tmux } from '../helpers/tmux.ts';

const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;
const PTY_WS = `${process.execPath} ${BIN}`;

let server: TestServer | null = null;
let tmux: Tmux | null = null;

afterEach(async () => {
  await tmux?.kill();
  tmux = null;
  if (server) await stopWithMultiplexers(server);
  server = null;
});

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

describe('session ids in the CLI', { timeout: 120_000 }, () => {
  it('takes a unique id prefix or a label for attach, share and sessions delete; makes a tmux session with --backend', async () => {
    server = await startTestServer();
    const env = { PTY_WS_URL: server.origin, PTY_WS_TOKEN: server.devToken! };
    const api = new SessionsApi({ origin: server.origin, instanceId: 'local', token: server.devToken });

    const help = await cli(['sessions', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--backend native\|tmux\|screen/);
    expect(help.stdout).toMatch(/a unique prefix of one, or a label/);

    const created = await cli(['sessions', 'create', '--backend', 'tmux', '--label', 'build', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const tmuxSession = JSON.parse(created.stdout) as { session_id: string; session_backend: string };
    expect(tmuxSession.session_backend).toBe('tmux');
    expect((await api.get(tmuxSession.session_id)).session_backend).toBe('tmux');
    expect((await cli(['sessions', 'create', '--backend', 'zellij'], env)).stderr).toMatch(/--backend "zellij": native, tmux or screen/);

    // By label: the share of "build".
    const share = await cli(['share', 'build', '--json'], env);
    expect(share.code, share.stderr).toBe(0);
    expect((JSON.parse(share.stdout) as { session_id: string }).session_id).toBe(tmuxSession.session_id);

    // By the shortest unique prefix: attach in a terminal, to the default session.
    const ids = (await api.list()).map((s) => s.session_id);
    const defaultId = server.defaultSession!.id;
    const prefix = shortestUniquePrefix(defaultId, ids);
    tmux = await Tmux.start(`${PTY_WS} attach ${prefix}`, { env, cols: 100, rows: 30 });
    await tmux.waitFor(`attached to session ${defaultId.slice(0, 8)} as controller`);
    await tmux.type('echo by-prefix-$((5+5))');
    await tmux.waitFor(/^by-prefix-10$/m);
    await tmux.sendKeys('C-]', 'd');
    expect(await tmux.waitForExit()).toBe(0);

    // Ambiguous and unknown names are refused, naming the problem.
    // UUIDv7 ids begin with their time: two made seconds apart share their first hex digits.
    const common = commonPrefix(ids);
    expect(common.length).toBeGreaterThanOrEqual(4);
    const ambiguous = await cli(['sessions', 'delete', common], env);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toMatch(/is ambiguous: it names 2 sessions/);
    const unknown = await cli(['attach', 'no-such-thing'], env);
    expect(unknown.code).toBe(255);
    expect(unknown.stderr).toMatch(/no session has an id starting with, or the label, "no-such-thing"/);

    const deleted = await cli(['sessions', 'delete', shortestUniquePrefix(tmuxSession.session_id, ids)], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout.trim()).toMatch(new RegExp(`^${tmuxSession.session_id}: (terminating|terminated)$`));
  });
});

function shortestUniquePrefix(id: string, all: string[]): string {
  for (let n = 4; n < id.length; n++) if (all.filter((other) => other.startsWith(id.slice(0, n))).length === 1) return id.slice(0, n);
  return id;
}

function commonPrefix(ids: string[]): string {
  let p = ids[0] ?? '';
  for (const id of ids) while (!id.startsWith(p)) p = p.slice(0, -1);
  return p;
}
