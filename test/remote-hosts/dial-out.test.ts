// The remote host's link URL and flags (pty/dial-out.ts, src/adapter/node/pty-host-main.ts): the credential never goes
// in clear text to a machine that is not this one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { linkUrl } from '../../pty/wire/host-config.ts';
import { runCli } from '../helpers/processes.ts';

describe('linkUrl', () => {
  it('is the link route under the router base URL, wss for https', () => {
    expect(linkUrl('https://pty.example/base/', 'local', 'laptop')).toBe('wss://pty.example/base/agents/local/hosts/laptop/link');
    expect(linkUrl('wss://pty.example', 'i-1', 'vm.2')).toBe('wss://pty.example/agents/i-1/hosts/vm.2/link');
    expect(linkUrl('http://127.0.0.1:8121?x=1#y', 'local', 'a')).toBe('ws://127.0.0.1:8121/agents/local/hosts/a/link');
    expect(linkUrl('ws://[::1]:8121', 'local', 'a')).toBe('ws://[::1]:8121/agents/local/hosts/a/link');
    expect(linkUrl('http://localhost:8121', 'local', 'a')).toBe('ws://localhost:8121/agents/local/hosts/a/link');
  });

  it('refuses plain ws:// to anything but loopback, and other schemes', () => {
    expect(() => linkUrl('http://pty.example', 'local', 'a')).toThrow(/only to a loopback/);
    expect(() => linkUrl('ws://10.0.0.1:8121', 'local', 'a')).toThrow(/only to a loopback/);
    expect(() => linkUrl('ws://127.0.0.1.evil.example', 'local', 'a')).toThrow(/only to a loopback/);
    expect(() => linkUrl('ftp://pty.example', 'local', 'a')).toThrow(/wss:\/\//);
    expect(() => linkUrl('not a url', 'local', 'a')).toThrow(/not a URL/);
  });
});

describe('pty-ws host --connect: its flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-dial-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const tokenFile = join(dir, 'token');

  const refusal = async (args: string[]) => {
    const cli = runCli(['host', ...args, '--state-dir', dir], {});
    expect(await cli.exited).toBe(2);
    return cli.stderr();
  };

  it('exits 2 naming the problem: a missing flag, a bad name, no credential, clear text off loopback', async () => {
    writeFileSync(tokenFile, 'pwhost_abc\n');
    expect(await refusal(['--connect', 'wss://pty.example', '--name', 'laptop'])).toContain('go together');
    expect(await refusal(['--connect', 'wss://pty.example', '--name', '../x', '--token-file', tokenFile])).toContain('--name');
    expect(await refusal(['--connect', 'ws://pty.example', '--name', 'laptop', '--token-file', tokenFile])).toContain('only to a loopback');
    expect(await refusal(['--connect', 'wss://pty.example', '--name', 'laptop', '--token-file', join(dir, 'absent')])).toContain('absent');
    writeFileSync(tokenFile, 'zdp_a-dev-token\n');
    expect(await refusal(['--connect', 'wss://pty.example', '--name', 'laptop', '--token-file', tokenFile])).toContain('not a host credential');
  }, 60_000);
});
