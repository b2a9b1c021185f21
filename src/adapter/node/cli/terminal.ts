// The local terminal side of `pty-ws attach`: what repaints it, what puts it back, the detach key.

/** Modes a full-screen program may have left on, back to their defaults, without moving the cursor. */
const MODES_DEFAULT =
  '\x1b[?1049l' + // normal screen buffer
  '\x1b[0m' + // attributes
  '\x1b[?1l\x1b>' + // cursor and keypad keys: normal
  '\x1b[4l\x1b[?7h\x1b[?45l' + // insert off, autowrap on, reverse wrap off
  '\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l' + // mouse and focus reporting off
  '\x1b[?2004l' + // bracketed paste off
  '\x1b[?25h'; // cursor visible

/**
 * Before a Keyframe's snapshot, which is meant for a fresh terminal: defaults, plus the two resets
 * that home the cursor (scroll region, origin mode), then a cleared screen.
 */
export const REPAINT = `${MODES_DEFAULT}\x1b[r\x1b[?6l\x1b[H\x1b[2J`;

/** On the way out: the user's terminal modes as they were, the cursor on a fresh line. */
export const RESTORE = `${MODES_DEFAULT}\r\n`;

export const DETACH_PREFIX = 0x1d; // Ctrl-]

/**
 * Splits keyboard input into bytes for the session and the detach key: Ctrl-] then `d` detaches,
 * Ctrl-] twice sends one Ctrl-], Ctrl-] then anything else sends both.
 */
export class DetachKey {
  private armed = false;

  feed(chunk: Uint8Array): { send: Uint8Array; detach: boolean } {
    const out: number[] = [];
    for (const b of chunk) {
      if (this.armed) {
        this.armed = false;
        if (b === 0x64 || b === 0x44) return { send: Uint8Array.from(out), detach: true };
        if (b !== DETACH_PREFIX) out.push(DETACH_PREFIX);
        out.push(b);
      } else if (b === DETACH_PREFIX) {
        this.armed = true;
      } else {
        out.push(b);
      }
    }
    return { send: Uint8Array.from(out), detach: false };
  }
}
