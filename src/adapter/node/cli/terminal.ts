// The local terminal side of `pty-ws attach`: entering and leaving its own alternate screen, what
// repaints it, the prefix key (Ctrl-]) and its commands, the one-line notices drawn over it.

/** Modes a full-screen program may have left on, back to their defaults, without moving the cursor. */
const MODES_DEFAULT =
  '\x1b[0m' + // attributes
  '\x1b[?1l\x1b>' + // cursor and keypad keys: normal
  '\x1b[4l\x1b[?7h\x1b[?45l' + // insert off, autowrap on, reverse wrap off
  '\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l' + // mouse and focus reporting off
  '\x1b[?2004l' + // bracketed paste off
  '\x1b[?25h'; // cursor visible

/**
 * On the way in (a terminal only): the local alternate screen, cleared. The user's screen,
 * scrollback and cursor stay behind it untouched (screen-switch.ts says why).
 */
export const ENTER = '\x1b[?1049h\x1b[H\x1b[2J';

/**
 * Before a Keyframe's snapshot, which is meant for a fresh terminal: defaults, plus the two resets
 * that home the cursor (scroll region, origin mode), then a cleared screen.
 */
export const REPAINT = `${MODES_DEFAULT}\x1b[r\x1b[?6l\x1b[H\x1b[2J`;

/**
 * On the way out: the modes back to their defaults, then the user's own screen back, with the
 * cursor where it was before the attach: nothing the session drew is left over earlier output.
 */
export const RESTORE = `${MODES_DEFAULT}\x1b[r\x1b[?1049l`;

export const PREFIX = 0x1d; // Ctrl-]

/** What Ctrl-] followed by a key does. */
export type PrefixAction = 'detach' | 'control' | 'observe';
const ACTIONS: Record<number, PrefixAction> = { 0x64: 'detach', 0x44: 'detach', 0x63: 'control', 0x43: 'control', 0x6f: 'observe', 0x4f: 'observe' };

/** The help the notices show. */
export const KEYS_HELP = { detach: 'Ctrl-] d detach', control: 'Ctrl-] c take control', observe: 'Ctrl-] o watch only' };

/**
 * Splits keyboard input into bytes for the session and the prefix commands: Ctrl-] then `d`
 * detaches, `c` asks for the controller role, `o` gives it up; Ctrl-] twice sends one Ctrl-],
 * Ctrl-] then anything else sends both.
 */
export class PrefixKey {
  private armed = false;

  feed(chunk: Uint8Array): { send: Uint8Array; action: PrefixAction | null } {
    const out: number[] = [];
    for (const b of chunk) {
      if (this.armed) {
        this.armed = false;
        const action = ACTIONS[b];
        if (action) return { send: Uint8Array.from(out), action };
        if (b !== PREFIX) out.push(PREFIX);
        out.push(b);
      } else if (b === PREFIX) {
        this.armed = true;
      } else {
        out.push(b);
      }
    }
    return { send: Uint8Array.from(out), action: null };
  }
}

/** A notice takes at most this many of the window's last rows. */
const NOTICE_ROWS = 3;

/**
 * A notice in reverse video on the window's last rows (wrapped at its width, at most three),
 * the cursor and attributes saved and restored around it (DECSC/DECRC) so the session's drawing
 * goes on where it was. The caller repaints from a Keyframe a little later, which takes it away.
 */
export function notice(text: string, window: { cols: number; rows: number }): string {
  const cols = Math.max(window.cols, 1);
  const parts: string[] = [];
  for (let at = 0; at < text.length && parts.length < NOTICE_ROWS; at += cols) parts.push(text.slice(at, at + cols));
  if (parts.length * cols < text.length) parts[parts.length - 1] = `${parts[parts.length - 1]!.slice(0, cols - 1)}…`;
  const first = Math.max(window.rows - parts.length + 1, 1);
  return `\x1b7${parts.map((p, i) => `\x1b[${first + i};1H\x1b[0;7m${p}\x1b[0m`).join('')}\x1b8`;
}
