// A remote host's own policy (pty/host-policy.ts, docs/remote-hosts.md): what an argv pattern
// allows and what it does not, and how `pty-ws host --connect` reads its policy flags.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/config.ts';
import { readPtyHostConfig } from '../../pty/wire/host-config.ts';
import { parseArgvPattern } from '../../pty/wire/host-config.ts';
import { checkSpawn, loginShellPatterns, matchesPattern, shellOfPasswdLine, type HostPolicy } from '../../pty/host-policy.ts';
import type { SpawnSpec } from '../../src/ports/pty-host.ts';

const allows = (pattern: string, argv: string[]) => matchesPattern(parseArgvPattern(pattern), argv);

describe('argv patterns', () => {
  it('an exact pattern allows that argv only: no extra, missing or changed argument', () => {
    expect(allows('/usr/bin/htop', ['/usr/bin/htop'])).toBe(true);
    expect(allows('/usr/bin/htop', ['/usr/bin/htop', '-d', '10'])).toBe(false);
    expect(allows('/usr/bin/git status', ['/usr/bin/git', 'status'])).toBe(true);
    expect(allows('/usr/bin/git status', ['/usr/bin/git'])).toBe(false);
    expect(allows('/usr/bin/git status', ['/usr/bin/git', 'status', '-c', 'core.pager=sh'])).toBe(false);
    expect(allows('/usr/bin/git status', ['/usr/bin/git', 'push'])).toBe(false);
    // The program is compared as written: no name lookup, no other spelling of the path.
    expect(allows('/usr/bin/htop', ['htop'])).toBe(false);
    expect(allows('/usr/bin/htop', ['/usr/bin/../bin/htop'])).toBe(false);
    expect(allows('/usr/bin/htop', ['/usr/bin/htop '])).toBe(false);
  });

  it('a last `*` allows any further arguments, or none, after the exact ones', () => {
    expect(allows('/bin/sh *', ['/bin/sh'])).toBe(true);
    expect(allows('/bin/sh *', ['/bin/sh', '-lc', 'rm -rf ~'])).toBe(true);
    expect(allows('/usr/bin/git log *', ['/usr/bin/git', 'log', '--oneline'])).toBe(true);
    expect(allows('/usr/bin/git log *', ['/usr/bin/git', 'push'])).toBe(false);
    expect(allows('/bin/sh *', ['/bin/bash', '-c', 'x'])).toBe(false);
  });

  it('refuses patterns that would be unsafe or mean something else', () => {
    expect(() => parseArgvPattern('htop')).toThrow(/absolute/);
    expect(() => parseArgvPattern('/usr/bin/../bin/htop')).toThrow(/normalised/);
    expect(() => parseArgvPattern('*')).toThrow(/names no program/);
    expect(() => parseArgvPattern('   ')).toThrow(/names no program/);
    expect(() => parseArgvPattern('/usr/bin/git * push')).toThrow(/last word/);
  });

  it('the default is the login shell, plain or as a login shell, from the passwd entry', () => {
    const shell = loginShellPatterns('/bin/bash');
    expect(shell.some((p) => matchesPattern(p, ['/bin/bash']))).toBe(true);
    expect(shell.some((p) => matchesPattern(p, ['/bin/bash', '-l']))).toBe(true);
    expect(shell.some((p) => matchesPattern(p, ['/bin/bash', '-c', 'id']))).toBe(false);
    expect(shell.some((p) => matchesPattern(p, ['/bin/sh', '-lc', 'id']))).toBe(false);
    expect(shellOfPasswdLine('op:x:1000:1000:Op,,,:/home/op:/usr/bin/zsh\n')).toBe('/usr/bin/zsh');
    expect(shellOfPasswdLine('op:x:1000:1000::/home/op:')).toBeUndefined();
  });
});

describe('checkSpawn', () => {
  const policy: HostPolicy = { host: 'laptop', allowed: [parseArgvPattern('/bin/sh *')] };
  const spec = (over: Partial<SpawnSpec>): SpawnSpec => ({ sessionId: 's', backend: 'native', argv: ['/bin/sh'], cwd: '/tmp', env: {}, cols: 80, rows: 24, ...over });
  const code = (s: SpawnSpec) => {
    try {
      checkSpawn(policy, s);
      return 'ok';
    } catch (e) {
      return (e as { code: string }).code;
    }
  };

  it('names the host; refuses an argv, a cwd with `..` or relative, loader variables', () => {
    expect(code(spec({}))).toBe('ok');
    expect(code(spec({ cwd: '/tmp/' }))).toBe('ok');
    expect(code(spec({ argv: ['/bin/bash'] }))).toBe('not_allowed');
    expect(() => checkSpawn(policy, spec({ argv: ['/bin/bash'] }))).toThrow(/host laptop/);
    expect(code(spec({ cwd: '/tmp/../root' }))).toBe('not_allowed');
    expect(code(spec({ cwd: 'tmp' }))).toBe('not_allowed');
    expect(code(spec({ env: { LD_PRELOAD: '/tmp/x.so' } }))).toBe('bad_env');
    expect(code(spec({ env: { GLIBC_TUNABLES: 'x' } }))).toBe('bad_env');
  });
});

describe('pty-ws host --connect policy flags', () => {
  const ENV = { PATH: '/usr/bin:/bin', HOME: '/home/op' };
  const base = ['--connect', 'ws://127.0.0.1:1', '--name', 'laptop', '--token-file', '/t'];
  const read = (args: string[]) => readPtyHostConfig(args, ENV, (p) => p, () => 'pwhost_x');

  it('reads repeated --allow-command, --backends, --sandbox and --session-user', () => {
    const c = read([...base, '--allow-command', '/bin/sh *', '--allow-command=/usr/bin/htop', '--backends', 'native,tmux', '--session-user', 'op', '--sandbox', 'bwrap']);
    expect(c.remote?.allowCommands).toEqual([{ words: ['/bin/sh'], rest: true }, { words: ['/usr/bin/htop'], rest: false }]);
    expect(c.remote?.backends).toEqual(['native', 'tmux']);
    expect(c.confinement).toMatchObject({ user: 'op', sandbox: 'bwrap' });
    expect(read(base).remote).toMatchObject({ allowCommands: undefined, backends: undefined });
  });

  it('refuses a bad pattern, an empty --backends, and policy flags without --connect', () => {
    const problems = (args: string[]) => {
      try {
        read(args);
      } catch (e) {
        return e instanceof ConfigError ? e.problems : [String(e)];
      }
      return [];
    };
    expect(problems([...base, '--allow-command', 'sh *', '--backends', ','])).toEqual([expect.stringContaining('absolute'), expect.stringContaining('--backends')]);
    expect(problems(['--allow-command', '/bin/sh'])).toEqual([expect.stringContaining('go with --connect')]);
    expect(problems([...base, '--allow-command'])).toEqual([expect.stringContaining('expected a value')]);
  });
});
