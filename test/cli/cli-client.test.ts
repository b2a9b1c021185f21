// `pty-ws attach` in a real terminal (a private tmux server) and `pty-ws sessions` over REST, against
// the real server: typing, window resizes, detach, the session's exit status, a network cut healed.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import { SessionsApi } from '../../src/client/sessions-api.ts';
import { ClientProbe, count } from '../helpers/probe.ts';
import { startProxy, type CuttableProxy } from '../helpers/proxy.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { Tmux } from '../helpers/tmux.ts';

const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;
const PTY_WS = `${process.execPath} ${BIN}`;

let server: TestServer | null = null;
let proxy: CuttableProxy | null = null;
let tmux: Tmux | null = null;
const clients: PtyClient[] = [];

afterEach(async () => {
  await tmux?.kill();
  tmux = null;
  for (const c of clients.splice(0)) c.close();
  await proxy?.close();
  proxy = null;
  await server?.stop();
  server = null;
});

/** A library client watching the session, to see what the CLI did from the server's side. */
async function watch(s: TestServer, sessionId: string, role: 'observer' | 'controller' = 'observer'): Promise<ClientProbe> {
  const client = new PtyClient({ url: s.attachUrl(sessionId), token: s.devToken, role, label: 'watcher', webSocket: nodeWebSocket() });
  clients.push(client);
  const probe = new ClientProbe(client);
  await client.connect();
  return probe;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** `attach` in tmux through a proxy the test can cut, at the session's prompt; its session id. */
async function attachBehindProxy(): Promise<string> {
  server = await startTestServer();
  proxy = await startProxy(server.port);
  const id = server.defaultSession!.id;
  tmux = await Tmux.start(`${PTY_WS} attach ws://127.0.0.1:${proxy.port}/agents/local/sessions/${id}/attach --token ${server.devToken}`);
  await tmux.waitFor('#');
  return id;
}

/** Cuts the CLI's network, runs `meanwhile`, then heals it and waits for the repaint. */
async function cutWhile(meanwhile: () => Promise<unknown>): Promise<void> {
  proxy!.cut({ refuse: true });
  await tmux!.waitFor('[pty-ws: connection lost, reconnecting…]');
  await meanwhile();
  proxy!.restore();
  // The rejoin's Keyframe takes the notice away (docs/architecture.md).
  await vi.waitFor(async () => expect(await tmux!.screen()).not.toContain('reconnecting'), { timeout: 20_000, interval: 100 });
}

// Each CLI run starts a Node process through tsx: generous time on a loaded machine, same assertions.
describe('pty-ws attach', { timeout: 60_000 }, () => {
  it('types into the session in binary mode, follows the window size, and detaches with Ctrl-] d', async () => {
    server = await startTestServer();
    const id = server.defaultSession!.id;
    tmux = await Tmux.start(`${PTY_WS} attach ${server.attachUrl(id)} --binary --label cli-user`, { env: { PTY_WS_TOKEN: server.devToken! }, cols: 100, rows: 30 });
    // The first joiner of a fresh session is its controller and sets its size: let that be the CLI.
    await tmux.waitFor('#');
    const watcher = await watch(server, id);
    expect(watcher.client.membership.controllers.map((m) => m.label)).toEqual(['cli-user']);
    expect(watcher.client.geometry).toEqual({ cols: 100, rows: 30 });

    await tmux.type('echo cli-$((6*7))');
    await tmux.waitFor(/^cli-42$/m);
    await watcher.waitForOutput('cli-42');

    await tmux.resize(90, 20);
    await watcher.waitFor(() => watcher.client.geometry?.cols === 90 && watcher.client.geometry.rows === 20, 'a Resize to 90x20');
    await tmux.type('stty size');
    await tmux.waitFor(/^20 90$/m);

    // Ctrl-] Ctrl-] sends one Ctrl-] (here: to cat, which prints it as ^]) and stays attached.
    await tmux.type('cat -v');
    await tmux.sendKeys('C-]', 'C-]', 'Enter', 'C-d');
    await tmux.waitFor(/^\^]$/m);
    await tmux.sendKeys('C-]', 'd');
    expect(await tmux.waitForExit(), await tmux.screen()).toBe(0);
    // `attach` gives the pane's screen back as it was (empty), so the line is at its top (see transcript).
    expect(await tmux.transcript()).toContain('[pty-ws: detached]');
    await watcher.waitFor(() => watcher.client.membership.controllers.length === 0, 'the CLI gone from membership');
    const rest = await new SessionsApi({ origin: server.origin, instanceId: 'local', token: server.devToken }).get(id);
    expect(rest.state).toBe('running');
  });

  it("exits with the session process's exit status", async () => {
    server = await startTestServer();
    const id = server.defaultSession!.id;
    tmux = await Tmux.start(`${PTY_WS} attach ${server.attachUrl(id)} --token ${server.devToken}`);
    await tmux.waitFor('#');
    await tmux.type('exit 7');
    expect(await tmux.waitForExit()).toBe(7);
    expect(await tmux.transcript()).toContain('[pty-ws: the session ended: exit 7]');
  });

  it('resumes after a network cut with replay_from, repainting over its notice', async () => {
    const id = await attachBehindProxy();
    await tmux!.type('echo before-$((1+1))');
    await tmux!.waitFor(/^before-2$/m);
    const other = await watch(server!, id, 'controller');
    await cutWhile(() => {
      other.client.send('echo during-$((2*21))\r');
      return other.waitForOutput('during-42');
    });
    await tmux!.waitFor(/^during-42$/m, 20_000);
    const screen = await tmux!.screen();
    expect(count(screen, 'before-2\n')).toBe(1);
    await tmux!.type('echo after-$((3+3))');
    await tmux!.waitFor(/^after-6$/m);
    // The server logs each join with its replay_from: the CLI's rejoin is the only one that has one.
    const rejoins = server!.logs.map((l) => JSON.parse(l) as { replay_from?: unknown }).filter((l) => typeof l.replay_from === 'number');
    expect(rejoins).toHaveLength(1);
  });

  it('types nothing the user did not type when the output it missed held terminal queries', async () => {
    // The local terminal (tmux here) answers the queries printed to it on the CLI's stdin; queries
    // printed while the CLI was away must not reach it on the rejoin, or their answers would be sent.
    const id = await attachBehindProxy();
    const other = await watch(server!, id, 'controller');
    let mark = 0;
    await cutWhile(async () => {
      other.client.send("printf '\\033[>c\\033[c\\033[6n'; echo during-$((2*21))\r");
      mark = (await other.waitForOutput('during-42\r\n')).length;
    });
    await tmux!.waitFor(/^during-42$/m, 20_000);
    await tmux!.type('echo after-$((3+3))');
    await other.waitForOutput('after-6\r\n');
    // The terminal's echo shows every byte the shell got since (an ESC as `^[`): only the typed line.
    expect(other.output().slice(mark)).toMatch(/^(?:[$#] )?echo after-\$\(\(3\+3\)\)\r\nafter-6\r\n/);
  });

  it('--observe watches without typing', async () => {
    server = await startTestServer();
    const id = server.defaultSession!.id;
    const ctl = await watch(server, id, 'controller');
    tmux = await Tmux.start(`${PTY_WS} attach ${id} --observe --url ${server.origin}`, { env: { PTY_WS_TOKEN: server.devToken! } });
    await ctl.waitFor(() => ctl.client.membership.observers.length === 1, 'the CLI as observer');
    await tmux.type('echo from-observer');
    ctl.client.send('echo from-controller-$((5*5))\r');
    await tmux.waitFor(/^from-controller-25$/m);
    expect(ctl.output()).not.toContain('from-observer');
  });

  it('reports a refused token and exits 255', async () => {
    server = await startTestServer();
    const r = await cli(['attach', server.attachUrl(server.defaultSession!.id), '--token', 'wrong']);
    expect(r.code).toBe(255);
    expect(r.stderr).toContain('HTTP 401');
  });
});

describe('pty-ws sessions', { timeout: 60_000 }, () => {
  it('creates, lists and deletes sessions over REST', async () => {
    server = await startTestServer();
    const env = { PTY_WS_URL: server.origin, PTY_WS_TOKEN: server.devToken! };
    const created = await cli(['sessions', 'create', '--label', 'from-cli', '--command', 'sleep 30', '--cols', '90', '--rows', '20'], env);
    expect(created.code, created.stderr).toBe(0);
    const [sessionId, attach] = created.stdout.trim().split('\n');
    expect(attach).toBe(server.attachUrl(sessionId!));

    const list = await cli(['sessions', 'list'], env);
    expect(list.stdout).toMatch(/^SESSION ID\s+STATE\s+HOST\s+CREATED\s+LABEL\s+COMMAND$/m);
    expect(list.stdout).toMatch(new RegExp(`${sessionId}  created +- `));
    expect(list.stdout).toMatch(/from-cli\s+sleep 30/);
    const json = JSON.parse((await cli(['sessions', 'list', '--json'], env)).stdout) as Array<{ session_id: string; terminal_size: unknown }>;
    expect(json.find((s) => s.session_id === sessionId)?.terminal_size).toEqual({ cols: 90, rows: 20 });

    const probe = await watch(server, sessionId!);
    const deleted = await cli(['sessions', 'delete', sessionId!], env);
    expect(deleted.stdout.trim()).toBe(`${sessionId}: terminating`);
    const end = await probe.client.whenEnded();
    expect(end.closed?.reason).toBe('killed');

    const unauthorized = await cli(['sessions', 'list', '--url', server.origin]);
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.stderr).toContain('HTTP 401');
    expect((await cli(['sessions', 'rename'], env)).code).toBe(2);
  });
});

describe('pty-ws share', { timeout: 60_000 }, () => {
  it('mints a link, lists shares with labels escaped, revokes', async () => {
    server = await startTestServer();
    const env = { PTY_WS_URL: server.origin, PTY_WS_TOKEN: server.devToken! };
    const { session_id: id } = await server.createSession({ label: 'evil\u001b]0;pwned\u0007\u001b[2J' });
    const minted = await cli(['share', id, '--control', '--expires', '30m', '--label', 'pair\u001b[31mred'], env);
    expect(minted.code, minted.stderr).toBe(0);
    const url = new URL(minted.stdout.trim());
    const fragment = new URLSearchParams(url.hash.slice(1));
    expect(fragment.get('session')).toBe(id);
    expect(fragment.get('token')).toMatch(/^pwshare_/);
    expect(fragment.has('observe')).toBe(false);
    const shareId = /share (\S+): may type, until (\S+)/.exec(minted.stderr)!;
    expect(Date.parse(shareId[2]!) - Date.now()).toBeGreaterThan(29 * 60_000);

    const list = await cli(['share', id, '--list'], env);
    expect(list.stdout).toMatch(/^SHARE ID\s+SCOPE\s+LABEL\s+CREATED BY\s+EXPIRES$/m);
    expect(list.stdout).toContain(`${shareId[1]}  pty:control  pair\\x1b[31mred  dev`);
    expect(list.stdout).not.toContain('\u001b');
    const sessions = await cli(['sessions', 'list'], env);
    expect(sessions.stdout).toContain('evil\\x1b]0;pwned\\x07\\x1b[2J');
    expect(sessions.stdout).not.toContain('\u001b');

    const revoked = await cli(['share', id, '--revoke', shareId[1]!], env);
    expect(revoked.stdout.trim()).toBe(`${shareId[1]}: revoked`);
    expect((await cli(['share', id, '--list'], env)).stdout.trim()).toBe('no active shares');
    const observe = await cli(['share', id], env);
    expect(new URLSearchParams(new URL(observe.stdout.trim()).hash.slice(1)).get('observe')).toBe('1');
  });
});
