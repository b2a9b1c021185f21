// `pty-ws start` with a token map, as an operator runs it: SIGHUP reloads the map without dropping
// anyone, a broken map on SIGHUP keeps the old one, a broken map at start stops it with a clear message.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { cliSandbox, until } from '../helpers/cli.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';

const cli = cliSandbox('pty-ws-cli-auth-');

const upgradeStatus = (url: string, token: string) => TestClient.upgradeStatus(url, { token });

describe('pty-ws start with PTY_WS_TOKENS_FILE', () => {
  it('reloads the token map on SIGHUP without dropping connections, and keeps it when the new file is broken', async () => {
    const file = join(cli.dir(), 'tokens.json');
    const first: TestToken = { token: newToken(), principal: 'first', scopes: ['pty:control'] };
    const second: TestToken = { token: newToken(), principal: 'second', scopes: ['pty:control'] };
    writeTokenFile(file, [first]);
    const r = cli.run(['start', '--port', '0', '--state-dir', join(cli.dir(), 'state')], { PTY_WS_TOKENS_FILE: file });
    const url = await until(() => /attach URL:\s+(ws:\/\/\S+)/.exec(r.stdout())?.[1], `the attach URL (stderr: ${r.stderr()})`);
    expect(r.stdout()).not.toContain('dev token');
    expect(r.stdout()).toContain('auth:        bearer tokens from PTY_WS_TOKENS_FILE');

    const c = await TestClient.connect(url, { token: first.token });
    await c.join({ role: 'controller' });
    writeTokenFile(file, [second]);
    r.proc.kill('SIGHUP');
    await until(async () => (await upgradeStatus(url, second.token)) === 101, 'the new token to work');
    expect(await upgradeStatus(url, first.token)).toBe(401);
    c.send('pty.session_input', { data: b64('echo kept-$((3*3))\r') });
    await c.waitForOutput('kept-9');

    writeFileSync(file, '{"tokens": [{"sha256": "abc", "principal": "x", "scopes": ["pty:control"]}]}');
    r.proc.kill('SIGHUP');
    await until(() => r.stderr().includes('token map reload failed'), 'the reload failure in the log');
    expect(r.stderr()).toContain(file);
    expect(await upgradeStatus(url, second.token)).toBe(101);
    expect(c.closed).toBeNull();
    for (const t of [first, second]) {
      expect(r.stderr()).not.toContain(t.token);
      expect(r.stdout()).not.toContain(t.token);
    }

    r.proc.kill('SIGINT');
    expect(await r.exit).toBe(0);
  });

  it('refuses to start with a broken token map, naming the file and the problem', async () => {
    const file = join(cli.dir(), 'tokens.json');
    writeFileSync(file, JSON.stringify({ tokens: [{ sha256: 'f'.repeat(64), principal: 'p', scopes: ['pty:everything'] }] }));
    const r = cli.run(['start', '--port', '0', '--state-dir', join(cli.dir(), 'state')], { PTY_WS_TOKENS_FILE: file });
    expect(await r.exit).toBe(2);
    expect(r.stderr()).toContain(`PTY_WS_TOKENS_FILE ${file}: tokens.0.scopes.0: one of pty:observe, pty:control, pty:admin`);
  });

  it('refuses PTY_WS_AUTH=off on a non-loopback address', async () => {
    const r = cli.run(['start', '--port', '0', '--state-dir', join(cli.dir(), 'state'), '--host', '0.0.0.0'], { PTY_WS_AUTH: 'off' });
    expect(await r.exit).toBe(2);
    expect(r.stderr()).toMatch(/PTY_WS_AUTH=off is refused on the non-loopback address/);
  });
});
