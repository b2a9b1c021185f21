// `pty-ws attach` in a real terminal (a private tmux server), against the real server, read with
// capture-pane before and after: leaving gives the user's screen back as it was (after vim and
// less ran in the session, and with less still open), the attach banner, the read-only notice of
// --observe and the key that asks for control, the notice for a session larger than the window
// (issue 21).
import { describe, expect, it } from 'vitest';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import { ClientProbe } from '../helpers/probe.ts';
import { freePort } from '../helpers/processes.ts';
import type { TestServer } from '../helpers/server.ts';
import { cliFixture, PTY_WS } from '../helpers/cli-fixture.ts';
import type { Tmux } from '../helpers/tmux.ts';


const cli = cliFixture();

async function controller(s: TestServer, sessionId: string, size?: { cols: number; rows: number }): Promise<ClientProbe> {
  const client = new PtyClient({ url: s.attachUrl(sessionId), token: s.devToken, role: 'controller', label: 'other', webSocket: nodeWebSocket(), ...(size ? { size } : {}) });
  cli.track(client);
  const probe = new ClientProbe(client);
  await client.connect();
  return probe;
}

/** The pane's rows as one string, each padded to the width: a notice wrapped over rows reads whole. */
const flat = (screen: string, cols: number) =>
  screen
    .split('\n')
    .map((l) => l.padEnd(cols))
    .join('');

/** Waits for `pattern` in the pane read as one string (see flat). */
async function waitForFlat(t: Tmux, pattern: RegExp, cols: number): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const s = flat(await t.screen(), cols);
    if (pattern.test(s)) return s;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(pattern)} in the pane:\n${await t.screen()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pane's lines without the blank ones at the end. */
const lines = (screen: string) => screen.replace(/\n+$/, '').split('\n');

describe('pty-ws attach on the local screen', { timeout: 90_000 }, () => {
  it('leaves the screen as it was before the attach, after vim and with less still open', async () => {
    const server = await cli.server();
    const id = server.defaultSession!.id;
    // What the user had on the screen: printed, then a pause so it can be read before the attach.
    const before = 'printf "earlier-%s\\n" 1 2 3; read go';
    const tmux = await cli.terminal(`${before}; ${PTY_WS} attach ${id} --url ${server.origin}; ${PTY_WS} attach ${id} --url ${server.origin}; sleep 30`, { env: { PTY_WS_TOKEN: server.devToken! }, cols: 80, rows: 24 });
    await tmux.waitFor(/^earlier-3$/m);
    const beforeAttach = lines(await tmux.screen());
    expect(beforeAttach).toEqual(['earlier-1', 'earlier-2', 'earlier-3']);
    await tmux.sendKeys('Enter');

    await waitForFlat(tmux, /attached to session [0-9a-f]{8} as controller · Ctrl-\] d detach · Ctrl-\] o watch only/, 80);
    await tmux.waitFor(/^# ?$/m);
    await tmux.type('echo inside-$((2+2))');
    await tmux.waitFor(/^inside-4$/m);
    // vim in its alternate screen, then quit: the normal screen comes back, drawn from the server.
    await tmux.type('vim -u NONE -N');
    await tmux.waitFor(/^~\s*$/m);
    await tmux.type(':q');
    await tmux.waitFor(/^inside-4$/m);
    expect(await tmux.screen()).not.toMatch(/^~\s*$/m);
    await tmux.sendKeys('C-]', 'd');
    await tmux.waitFor('[pty-ws: detached]');
    const afterFirst = lines(await tmux.screen());
    // The user's screen as it was (the blank line is where Enter was pressed), the detach line
    // where the cursor was, nothing of the session's over it.
    expect(afterFirst).toEqual(['earlier-1', 'earlier-2', 'earlier-3', '', '[pty-ws: detached]']);
    expect(afterFirst.join('\n')).not.toContain('inside-4');

    // The second attach (same pane): less still open when it detaches.
    await tmux.waitFor(/attached to session/);
    await tmux.type('seq 1 200 | less');
    await tmux.waitFor(/^:\s*$/m);
    await tmux.sendKeys('C-]', 'd');
    // (The pane stays alive: tmux draws a dead pane's screen over.)
    await tmux.waitFor(/detached\]\n\[pty-ws: detached\]/);
    const afterSecond = lines(await tmux.screen());
    expect(afterSecond).toEqual(['earlier-1', 'earlier-2', 'earlier-3', '', '[pty-ws: detached]', '[pty-ws: detached]']);
  });

  it('--observe says it is read-only; Ctrl-] c takes control; a session larger than the window is named', async () => {
    const server = await cli.server();
    const id = server.defaultSession!.id;
    const other = await controller(server, id, { cols: 100, rows: 30 });
    await other.waitFor(() => other.client.geometry?.cols === 100, 'the session at 100x30');
    const tmux = await cli.terminal(`${PTY_WS} attach ${id} --observe --url ${server.origin}`, { env: { PTY_WS_TOKEN: server.devToken! }, cols: 80, rows: 24 });
    const banner = await waitForFlat(tmux, /edge is cut off/, 80);
    expect(banner).toMatch(/READ-ONLY, watching session [0-9a-f]{8}: your keys are not sent · Ctrl-\] c take control/);
    expect(banner).toMatch(/the session is 100x30, larger than this window \(80x24\)/);
    await tmux.type('echo from-observer');
    other.client.send('echo marker-$((3*3))\r');
    await tmux.waitFor(/^marker-9$/m);
    expect(other.output()).not.toContain('from-observer');

    await tmux.sendKeys('C-]', 'c');
    await waitForFlat(tmux, /you control session [0-9a-f]{8} now: your keys are sent/, 80);
    await other.waitFor(() => other.client.membership.controllers.length === 2, 'the CLI a controller');
    await tmux.type('echo typed-$((4*4))');
    await other.waitForOutput('typed-16');
    await tmux.sendKeys('C-]', 'd');
    expect(await tmux.waitForExit()).toBe(0);
  });

  it('says "cannot reach …: connection refused" when no server listens', async () => {
    const port = await freePort();
    const tmux = await cli.terminal(`${PTY_WS} sessions list --url http://127.0.0.1:${port} --token x; ${PTY_WS} attach 0190 --url http://127.0.0.1:${port} --token x; sleep 30`, { cols: 120, rows: 10 });
    const screen = await tmux.waitFor(/cannot reach[\s\S]*cannot reach/, 60_000);
    const refused = new RegExp(`^pty-ws: cannot reach http://127\\.0\\.0\\.1:${port}: connection refused`, 'gm');
    expect(screen.match(refused)).toHaveLength(2);
    expect(screen).not.toContain('fetch failed');
  });
});
