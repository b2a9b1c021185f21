// Running an agent's command in a live interactive shell: the line typed into the terminal, and
// finding where the command's output starts and ends in the PTY stream.
//
// The command is typed as a brace group whose first and last commands print OSC 133-style marks
// (invisible in a terminal) carrying a per-run nonce:
//
//    { printf '\033]133;C;pw=NONCE\007'; COMMAND
//   }; printf '\033]133;D;%s;pw=NONCE\007' "$?"
//
// The shell reads the whole group before running any of it, so its echo and PS2 prompt come
// before the start mark; `$?` after the group is the command's exit status. The closing brace on
// its own line keeps a trailing `# comment` or `&` in the command harmless, and the leading space
// keeps the line out of history where HISTCONTROL ignores space-prefixed lines (bash's default on
// most distributions). The echo holds `\033` as four characters, never the ESC byte, so it can
// never be mistaken for a mark.
//
// tmux and screen parse what the shell prints and draw their own screen for their client: an OSC
// they do not know never reaches the PTY host. Under them each mark travels inside the DCS
// passthrough string they forward to their client untouched (docs/architecture.md, "Command
// tasks"): `ESC P <mark> ESC \` for screen, `ESC P tmux; <mark, its ESC doubled> ESC \`
// for tmux (with `allow-passthrough`, set by the PTY host's tmux config). tmux writes a
// passthrough to its client at once but the text before it in the same read only when that read
// is done, so its mark is preceded by ICH then DCH (`ESC [ @ ESC [ P`): both make tmux write out
// what it holds first, and together they leave the line as it was (but for its last column). What
// arrives is the same mark on every backend, so CommandCapture is one for all.

/** What the printf around a mark says, per backend: before it, its ESC, after it. */
const PASSTHROUGH: Record<string, { open: string; esc: string; close: string }> = {
  tmux: { open: '\\033[@\\033[P\\033Ptmux;', esc: '\\033\\033', close: '\\033\\\\' },
  screen: { open: '\\033P', esc: '\\033', close: '\\033\\\\' },
};
const DIRECT = { open: '', esc: '\\033', close: '' };

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'oksh', 'loksh']);

/**
 * True when argv starts an interactive POSIX shell: a known shell with only options, none of them
 * `-c` (alone or bundled as in `-lc`), and no script operand.
 */
export function isInteractiveShell(argv: readonly string[] | null): boolean {
  if (!argv || argv.length === 0) return false;
  const name = argv[0]!.slice(argv[0]!.lastIndexOf('/') + 1).replace(/^-/, '');
  if (!SHELLS.has(name)) return false;
  return argv.slice(1).every((a) => a.startsWith('-') && (a.startsWith('--') || !a.includes('c')));
}

/** The text typed into the PTY to run `command` between marks carrying `nonce`, on a session of `backend`. */
export function commandLine(command: string, nonce: string, backend = 'native'): string {
  const body = command.replace(/\r\n?|\n/g, '\r');
  const { open, esc, close } = PASSTHROUGH[backend] ?? DIRECT;
  const mark = (fields: string) => `'${open}${esc}]133;${fields};pw=${nonce}\\007${close}'`;
  return ` { printf ${mark('C')}; ${body}\r}; printf ${mark('D;%s')} "$?"\r`;
}

/** A fresh nonce: 8 hex digits, unique enough within one terminal's lifetime. */
export function newNonce(): string {
  const b = new Uint8Array(4);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

/** Bytes as a string of the same length, one char per byte: marks are ASCII, output may be anything. */
function byteString(bytes: Uint8Array): string {
  let s = '';
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) s += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return s;
}

function stringBytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

export interface Captured {
  /** The raw bytes the command printed (up to the cap). */
  bytes: Uint8Array;
  /** True when the command printed more than the cap and the rest was not kept. */
  truncated: boolean;
}

/** Watches PTY output for one run's marks and keeps what lies between them. */
export class CommandCapture {
  private readonly start: string;
  private readonly end: RegExp;
  /** Longest suffix of a chunk that could be the beginning of a mark split across chunks. */
  private readonly keep: number;
  private phase: 'before' | 'capturing' | 'done' = 'before';
  private carry = '';
  private readonly chunks: string[] = [];
  private size = 0;
  private truncated = false;

  constructor(
    nonce: string,
    private readonly maxBytes: number,
  ) {
    this.start = `\x1b]133;C;pw=${nonce}\x07`;
    this.end = new RegExp(`\\x1b\\]133;D;(\\d{1,3});pw=${nonce}\\x07`);
    this.keep = `\x1b]133;D;255;pw=${nonce}\x07`.length - 1;
  }

  /** True once the shell started the command (the start mark was seen). */
  get started(): boolean {
    return this.phase !== 'before';
  }

  /** Feeds PTY output; returns the exit status once the end mark is seen. */
  feed(data: Uint8Array): { exitCode: number } | null {
    if (this.phase === 'done') return null;
    let text = this.carry + byteString(data);
    this.carry = '';
    if (this.phase === 'before') {
      const at = text.indexOf(this.start);
      if (at < 0) {
        this.carry = text.slice(-(this.start.length - 1));
        return null;
      }
      this.phase = 'capturing';
      text = text.slice(at + this.start.length);
    }
    const m = this.end.exec(text);
    if (m) {
      this.push(text.slice(0, m.index));
      this.phase = 'done';
      return { exitCode: Number(m[1]) };
    }
    const cut = Math.max(0, text.length - this.keep);
    this.push(text.slice(0, cut));
    this.carry = text.slice(cut);
    return null;
  }

  /** What the command printed so far (all of it once the end mark was seen). */
  captured(): Captured {
    const tail = this.phase === 'capturing' ? this.carry : '';
    const all = this.chunks.join('') + tail.slice(0, Math.max(0, this.maxBytes - this.size));
    return { bytes: stringBytes(all), truncated: this.truncated || this.size + tail.length > this.maxBytes };
  }

  private push(s: string): void {
    if (!s) return;
    const room = this.maxBytes - this.size;
    if (s.length > room) this.truncated = true;
    const kept = s.length > room ? s.slice(0, room) : s;
    if (kept) this.chunks.push(kept);
    this.size += kept.length;
  }
}
