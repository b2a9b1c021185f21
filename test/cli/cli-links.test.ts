// `pty-ws attach` handed what people hand each other: the page URL `pty-ws start` prints and share
// links (docs/sharing.md), in a real terminal (a private tmux server) against the real server. A
// watch link or a watch-only token watches without --observe, the host sees the guest under the
// share's label, and a revoked link says so.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import { SessionsApi } from '../../src/client/sessions-api.ts';
import { cliFixture, PTY_WS } from '../helpers/cli-fixture.ts';
import { ClientProbe } from '../helpers/probe.ts';
import type { TestServer } from '../helpers/server.ts';

const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;
const live = cliFixture();

/** The dev token's controller in the session, to see the CLI as the host sees it. */
async function host(s: TestServer, sessionId: string): Promise<ClientProbe> {
  const client = live.track(new PtyClient({ url: s.attachUrl(sessionId), token: s.devToken, role: 'controller', label: 'host', webSocket: nodeWebSocket() }));
  const probe = new ClientProbe(client);
  await client.connect();
  return probe;
}

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

const api = (s: TestServer) => new SessionsApi({ origin: s.origin, instanceId: s.config.instanceId, token: s.devToken });

describe('pty-ws attach with links', { timeout: 60_000 }, () => {
  it("takes the page URL `pty-ws start` prints: its token, and the default session", async () => {
    const server = await live.server();
    const id = server.defaultSession!.id;
    // Quoted for the shell tmux runs it with: the URL has a # and may have &.
    const tmux = await live.terminal(`${PTY_WS} attach '${server.origin}/#token=${server.devToken}' --label cli-user`);
    await tmux.waitFor('#');
    await tmux.type('echo page-$((6*7))');
    await tmux.waitFor(/^page-42$/m);
    const seen = await host(server, id);
    expect(seen.client.membership.controllers.map((m) => m.label)).toContain('cli-user');
  });

  it("a watch link watches without --observe, under the share's label; revoked, it says so", async () => {
    const server = await live.server();
    const id = server.defaultSession!.id;
    const seen = await host(server, id);
    const share = await api(server).mintShare(id, { scope: 'pty:observe', label: 'for-cli' });
    const tmux = await live.terminal(`${PTY_WS} attach '${share.url}'`);
    await seen.waitFor(() => seen.client.membership.observers.some((m) => m.label === 'for-cli'), "the guest as 'for-cli'");
    seen.client.send('echo watched-$((6*7))\r');
    await tmux.waitFor(/^watched-42$/m);

    await api(server).revokeShare(id, share.share_id);
    expect(await tmux.waitForExit()).toBe(255);
    expect(await tmux.transcript()).toContain('pty-ws: this link was revoked');
    // And to whoever tries it afterwards.
    const again = await cli(['attach', share.url]);
    expect(again.code).toBe(255);
    expect(again.stderr).toContain('pty-ws: this link was revoked');
  });

  it('a watch-only token given with --token watches without --observe', async () => {
    const server = await live.server();
    const id = server.defaultSession!.id;
    const seen = await host(server, id);
    const share = await api(server).mintShare(id, { scope: 'pty:observe' });
    const tmux = await live.terminal(`${PTY_WS} attach ${server.attachUrl(id)} --token ${share.token} --label watcher`);
    await seen.waitFor(() => seen.client.membership.observers.some((m) => m.label === 'watcher'), 'the CLI as an observer');
    seen.client.send('echo token-$((6*7))\r');
    await tmux.waitFor(/^token-42$/m);
    expect(seen.client.membership.controllers.map((m) => m.label)).toEqual(['host']);
  });
});
