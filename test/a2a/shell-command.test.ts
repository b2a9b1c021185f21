// Unit tests of the pieces of a command task that need no terminal: marks, shell detection, text.
import { describe, expect, it } from 'vitest';
import { BindingError } from '../../src/protocol/errors.ts';
import { CommandCapture, commandLine, isInteractiveShell, newNonce } from '../../src/tasks/shell-command.ts';
import { decodePageToken, encodePageToken } from '../../src/tasks/page-token.ts';
import { keystrokes, planMessage } from '../../src/tasks/task-plan.ts';
import { TerminalGate } from '../../src/tasks/terminal-gate.ts';
import { terminalText } from '../../src/tasks/terminal-text.ts';

const bytes = (s: string) => Uint8Array.from(Buffer.from(s, 'latin1'));
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));

describe('CommandCapture', () => {
  const nonce = 'a1b2c3d4';
  const start = `\x1b]133;C;pw=${nonce}\x07`;
  const end = (code: number) => `\x1b]133;D;${code};pw=${nonce}\x07`;
  // What a shell prints: the echoed line (with \033 as text, never the byte), PS2, marks, output.
  const stream = `$ ${commandLine('ls', nonce)}> ${start}file-1\r\nfile-ü\r\n${end(2)}$ `;

  it('finds the marks and keeps exactly what lies between them, however the stream is split', () => {
    const raw = Uint8Array.from(Buffer.from(stream, 'utf8'));
    for (const size of [1, 2, 3, 7, 16, 31, raw.length]) {
      const c = new CommandCapture(nonce, 1 << 20);
      let result: { exitCode: number } | null = null;
      for (let i = 0; i < raw.length; i += size) result = c.feed(raw.subarray(i, i + size)) ?? result;
      expect(result, `chunks of ${size}`).toEqual({ exitCode: 2 });
      expect(terminalText(c.captured().bytes)).toBe('file-1\nfile-ü\n');
      expect(c.captured().truncated).toBe(false);
    }
  });

  it('ignores the marks of another run and the echoed text of its own', () => {
    const c = new CommandCapture(nonce, 1 << 20);
    expect(c.feed(bytes(`\x1b]133;C;pw=ffffffff\x07x\x1b]133;D;0;pw=ffffffff\x07`))).toBeNull();
    expect(c.started).toBe(false);
    expect(c.feed(bytes(commandLine('true', nonce)))).toBeNull();
    expect(c.started).toBe(false);
    expect(c.feed(bytes(`${start}ok\r\n`))).toBeNull();
    expect(c.started).toBe(true);
    expect(c.feed(bytes(end(0)))).toEqual({ exitCode: 0 });
  });

  it('keeps what was printed so far when it never ends, and caps what it keeps', () => {
    const c = new CommandCapture(nonce, 10);
    c.feed(bytes(`${start}0123456789abcdef`));
    expect(Buffer.from(c.captured().bytes).toString('latin1')).toBe('0123456789');
    expect(c.captured().truncated).toBe(true);
    const open = new CommandCapture(nonce, 1 << 20);
    open.feed(bytes(`${start}partial`));
    expect(Buffer.from(open.captured().bytes).toString('latin1')).toBe('partial');
  });

  it('nonces differ', () => {
    expect(newNonce()).toMatch(/^[0-9a-f]{8}$/);
    expect(new Set(Array.from({ length: 50 }, newNonce)).size).toBe(50);
  });
});

describe('commandLine', () => {
  it('puts the command alone on its lines between the marks, with a space first (kept out of history)', () => {
    expect(commandLine('echo a\necho b', 'n')).toBe(" { printf '\\033]133;C;pw=n\\007'; echo a\recho b\r}; printf '\\033]133;D;%s;pw=n\\007' \"$?\"\r");
  });

  it('wraps each mark in the DCS passthrough of tmux (flushing its cells first) and screen', () => {
    expect(commandLine('ls', 'n', 'tmux')).toBe(" { printf '\\033[@\\033[P\\033Ptmux;\\033\\033]133;C;pw=n\\007\\033\\\\'; ls\r}; printf '\\033[@\\033[P\\033Ptmux;\\033\\033]133;D;%s;pw=n\\007\\033\\\\' \"$?\"\r");
    expect(commandLine('ls', 'n', 'screen')).toBe(" { printf '\\033P\\033]133;C;pw=n\\007\\033\\\\'; ls\r}; printf '\\033P\\033]133;D;%s;pw=n\\007\\033\\\\' \"$?\"\r");
  });
});

describe('isInteractiveShell', () => {
  it.each([
    [['/bin/sh', '-l'], true],
    [['bash'], true],
    [['/usr/bin/zsh', '-i', '--login'], true],
    [['-bash'], true],
    [['/bin/bash', '--norc', '--noprofile', '-i'], true],
    [['/bin/sh', '-lc', 'top'], false],
    [['/bin/bash', '-c', 'x'], false],
    [['bash', 'script.sh'], false],
    [['/usr/bin/fish'], false],
    [['/bin/cat'], false],
  ])('%j → %s', (argv, shell) => {
    expect(isInteractiveShell(argv)).toBe(shell);
  });
  it('is false before a process has an argv', () => {
    expect(isInteractiveShell(null)).toBe(false);
  });
});

describe('terminalText', () => {
  it('drops escapes and controls, turns CRLF into LF and keeps the last rewrite of a line', () => {
    expect(terminalText(utf8('\x1b[1;31mred\x1b[0m\r\n\x1b]0;title\x07plain\ttab\x07\r\n'))).toBe('red\nplain\ttab\n');
    expect(terminalText(utf8('10%\r50%\r100%\r\ndone'))).toBe('100%\ndone');
    expect(terminalText(utf8('\x1b(B\x1b=keypad\x1b[?2004l\r'))).toBe('keypad');
  });
});

describe('planMessage', () => {
  it('is a command for text parts in a shell, keystrokes otherwise', () => {
    expect(planMessage([{ text: 'ls' }, { text: 'pwd' }], true)).toEqual({ kind: 'command', command: 'ls\npwd' });
    const typed = planMessage([{ text: 'q' }, { data: { input: '\x1b:wq' } }, { raw: Buffer.from([3]).toString('base64') }], true);
    expect(typed.kind).toBe('input');
    expect(Buffer.from(keystrokes([{ text: 'q' }, { text: 'line\n' }, { data: { input: '\x1b' } }])).toString()).toBe('q\rline\n\x1b');
    expect(planMessage([{ text: 'ls' }], false)).toEqual({ kind: 'input', bytes: new TextEncoder().encode('ls\r') });
    expect(() => planMessage([{ data: { other: 1 } }], true)).toThrow(BindingError);
  });
});

describe('page tokens', () => {
  it('round-trip and refuse anything else', () => {
    const cursor = { statusTimestamp: '2026-01-01T00:00:00.000Z', id: '0192' };
    expect(decodePageToken(encodePageToken(cursor))).toEqual(cursor);
    for (const bad of ['', 'x', Buffer.from('[1,2]').toString('base64url'), Buffer.from('{"a":1}').toString('base64url')]) {
      expect(() => decodePageToken(bad)).toThrow(/page_token/);
    }
  });
});

describe('TerminalGate', () => {
  const limits = { humanQuietMs: 500, settleMs: 300 };

  it('holds commands while a human line is half-typed, for the quiet period, and after a Ctrl-C', () => {
    const g = new TerminalGate(limits);
    expect(g.busyFor(0)).toBe(0);
    expect(g.humanTyped('alice', utf8('ls -l'), 1000)).toBe(false);
    expect(g.busyFor(5000)).toBe(-1);
    expect(g.humanTyped('alice', utf8('\r'), 2000)).toBe(false);
    expect(g.busyFor(2100)).toBe(400);
    expect(g.busyFor(2500)).toBe(0);
    expect(g.humanTyped('alice', utf8('abc\x15'), 3000)).toBe(false);
    expect(g.busyFor(3600)).toBe(0);
    expect(g.humanTyped('alice', utf8('\x03'), 4000)).toBe(true);
    g.interrupted(4600);
    expect(g.busyFor(4700)).toBe(200);
  });

  it('holds a half-typed line only while one of the humans who wrote it is connected', () => {
    const g = new TerminalGate(limits);
    g.humanTyped('alice', utf8('ls -'), 1000);
    g.humanTyped('bob', utf8('l'), 1000);
    g.humanLeft('alice');
    expect(g.busyFor(5000)).toBe(-1);
    expect(g.waitingFor(5000)).toBe('waiting for a human to finish their line');
    expect(g.takeAbandonedLine()).toBe(false);
    // An observer or a controller that typed nothing leaving changes nothing.
    g.humanLeft('carol');
    expect(g.busyFor(5000)).toBe(-1);
    g.humanLeft('bob');
    expect(g.busyFor(5000)).toBe(0);
    expect(g.waitingFor(5000)).toBeNull();
    // The line they left is cleared before the next command, once.
    expect(g.takeAbandonedLine()).toBe(true);
    expect(g.takeAbandonedLine()).toBe(false);

    // One human ends the line for all: Enter from bob releases alice's half line, nothing to clear.
    g.humanTyped('alice', utf8('echo '), 6000);
    g.humanTyped('bob', utf8('hi\r'), 6000);
    expect(g.busyFor(7000)).toBe(0);
    g.humanLeft('alice');
    expect(g.takeAbandonedLine()).toBe(false);
    // A line left behind and then finished by someone else is not cleared either.
    g.humanTyped('alice', utf8('echo '), 8000);
    g.humanLeft('alice');
    g.humanTyped('bob', utf8('\x15'), 8000);
    expect(g.takeAbandonedLine()).toBe(false);
  });

  it('follows the alternate screen in the output, however the switch is split', () => {
    const stream = `plain \x1b[1m bold \x1b[?1049hFULL\x1b[2J${'x'.repeat(100)}\x1b[?1049l back \x1b[?47h`;
    const raw = utf8(stream);
    for (const size of [1, 2, 3, 5, 8, 13]) {
      const g = new TerminalGate(limits);
      const full: boolean[] = [];
      for (let i = 0; i < raw.length; i += size) {
        g.printed(raw.subarray(i, i + size));
        full.push(g.busyFor(0) === -1);
      }
      // Off, then on (1049h), off again (1049l), and on at the end (47h).
      const on = full.indexOf(true);
      const off = full.indexOf(false, on);
      expect([full[0], on > 0, off > on, full.at(-1)], `chunks of ${size}`).toEqual([false, true, true, true]);
    }
    const g = new TerminalGate(limits);
    g.printed(utf8('\x1b[?1049h'));
    expect(g.busyFor(0)).toBe(-1);
    g.printed(utf8('\x1b[?10'));
    g.printed(utf8('49l$ '));
    expect(g.busyFor(0)).toBe(0);
  });
});
