// The PTY host reads its own few settings (pty/wire/host-config.ts), not the router's whole Config:
// what a router tells a host it starts is read back exactly, a router setting the host does not
// use can neither stop it nor be given to it, and `pty-ws pty-host` takes its flags wherever they
// stand on the command line.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/config.ts';
import { ptyHostArgs, readPtyHostConfig, type PtyHostLaunch } from '../../pty/wire/host-config.ts';
import { cliSandbox, until } from '../helpers/cli.ts';

const absolute = (p: string): string => (p.startsWith('/') ? p : `/cwd/${p}`);
const ENV = { PATH: '/usr/bin:/bin', HOME: '/home/op' };

describe('readPtyHostConfig', () => {
  it.each<[string, PtyHostLaunch]>([
    ['unconfined', { socketPath: '/s/pty-host.sock', startedBy: undefined, logLevel: 'warn', confinement: { user: undefined, sandbox: 'none', network: 'host', hide: [] } }],
    ['confined, started by a router', { socketPath: '/s/h.sock', startedBy: '/srv/state', logLevel: 'debug', confinement: { user: 'ptyuser', sandbox: 'bwrap', network: 'none', hide: ['/srv/state', '/etc/pty-ws/tokens.json'] } }],
  ])('reads back what a router tells a host it starts (%s)', (_name, launch) => {
    expect(readPtyHostConfig(ptyHostArgs(launch), ENV, absolute)).toEqual({ ...launch, path: '/usr/bin:/bin', home: '/home/op' });
  });

  it("takes its settings from the environment too, and ignores the router's own, even bad ones", () => {
    const env = { ...ENV, PTY_WS_STATE_DIR: 'state', PTY_WS_SESSION_SANDBOX: 'bwrap', PTY_WS_PORT: 'eighty', PTY_WS_DATABASE_URL: 'nonsense', PTY_WS_JWT_SECRET: 'not for the host' };
    const config = readPtyHostConfig(['pty-host'], env, absolute);
    expect(config.socketPath).toBe('/cwd/state/pty-host.sock');
    expect(config.confinement.sandbox).toBe('bwrap');
    expect(JSON.stringify(config)).not.toContain('not for the host');
  });

  it("refuses a router-only flag and a bad value of its own, naming each", () => {
    const refused = (() => {
      try {
        readPtyHostConfig(['--port', '8121', '--session-sandbox', 'docker'], ENV, absolute);
      } catch (e) {
        return e;
      }
    })();
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems).toEqual([expect.stringContaining('unknown flag --port'), expect.stringContaining('PTY_WS_SESSION_SANDBOX (--session-sandbox)')]);
  });
});

describe('pty-ws pty-host', () => {
  const cli = cliSandbox('pty-ws-host-cli-');

  it('listens on the socket its flags name, wherever they stand, whatever router settings are set', async () => {
    const socket = join(cli.dir(), 'host.sock');
    const r = cli.run(['--socket', socket, 'pty-host', '--log-level', 'debug'], { PTY_WS_PORT: 'eighty' });
    await until(() => r.stdout().includes('pty-host listening') || r.proc.exitCode !== null, 'the host to listen or exit');
    expect(r.stdout(), r.stderr()).toBe(`pty-host listening ${socket}\n`);
    r.proc.kill('SIGTERM');
    expect(await r.exit).toBe(0);
  });

  it('refuses a bad setting with status 2, naming it', async () => {
    const r = cli.run(['pty-host', '--socket', join(cli.dir(), 'host.sock'), '--session-network', 'maybe']);
    expect(await r.exit).toBe(2);
    expect(r.stderr()).toContain('PTY_WS_SESSION_NETWORK (--session-network)');
  });
});
