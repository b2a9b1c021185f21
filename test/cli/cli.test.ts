// `pty-ws start` as a user runs it: printed URLs and token, a working default session, orderly Ctrl-C.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { cliSandbox, until } from '../helpers/cli.ts';

const cli = cliSandbox('pty-ws-cli-');

describe('pty-ws start', () => {
  it('prints the attach URL and a dev token that work, and shuts down in order on SIGINT', async () => {
    const r = cli.run(['start', '--port', '0', '--state-dir', join(cli.dir(), 'state')]);
    const attach = await until(() => /attach URL:\s+(ws:\/\/\S+)/.exec(r.stdout())?.[1], `the attach URL (stderr: ${r.stderr()})`);
    const token = await until(() => /dev token:\s+(\S+)/.exec(r.stdout())?.[1], 'the dev token');
    expect(attach).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/agents\/local\/sessions\/[0-9a-f-]{36}\/attach$/);
    expect(r.stdout()).not.toContain(':0/');

    const c = await TestClient.connect(attach, { token });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo from-cli-$((6*7))\r') });
    await c.waitForOutput('from-cli-42');

    r.proc.kill('SIGINT');
    const bye = await c.waitForFrame((f) => f.op === 'binding_goodbye', 'goodbye');
    expect(bye.payload).toEqual({ reason: 'server_shutdown' });
    expect((await c.waitForClose()).code).toBe(1000);
    expect(await r.exit).toBe(0);
    expect(existsSync(join(cli.dir(), 'state', 'pty-ws.db'))).toBe(true);
    expect(existsSync(join(cli.dir(), 'state', 'pty-host.sock'))).toBe(false);
    expect(r.stderr()).not.toContain(token);
  });

  it('refuses a bad setting at start, naming it and the accepted values', async () => {
    const r = cli.run(['start', '--state-dir', join(cli.dir(), 'state')], { PTY_WS_PORT: 'eighty', PTY_WS_AUTH: 'maybe' });
    expect(await r.exit).toBe(2);
    expect(r.stderr()).toContain('PTY_WS_PORT');
    expect(r.stderr()).toContain('PTY_WS_AUTH');
    expect(r.stderr()).toContain('"on"');
  });

  it('prints every setting with --help', async () => {
    const r = cli.run(['--help']);
    expect(await r.exit).toBe(0);
    for (const name of ['PTY_WS_HOST', 'PTY_WS_PORT', 'PTY_WS_DATABASE_URL', 'PTY_WS_PTY_SOCKET', 'PTY_WS_MAX_CONTROLLERS', '--keyframe-interval-frames']) {
      expect(r.stdout()).toContain(name);
    }
  });
});
