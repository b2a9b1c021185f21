// `pty-ws attach` draws the session inside the local terminal's alternate screen, so that leaving
// gives back the user's screen, scrollback and cursor exactly as they were (as `tmux attach`
// does). The session's own alternate-screen switches (vim, less, top) must then not
// reach the local terminal: its `?1049l` would drop us onto the user's screen and draw over it,
// and a `?1049l` after the program is gone restores a cursor saved long ago. So the switches are
// taken out of the stream: entering clears the screen, leaving clears it and asks the caller to
// repaint the normal screen from a fresh Keyframe (the server's emulator kept it).

/** DECSET/DECRST 1049, 1047 and 47: the switches, alone in their sequence as programs send them. */
// eslint-disable-next-line no-control-regex -- the switch starts with ESC
const SWITCH = /\x1b\[\?(?:1049|1047|47)([hl])/g;
/** A chunk that ends part-way into a switch: those bytes wait for the next chunk. */
// eslint-disable-next-line no-control-regex -- the switch starts with ESC
const PARTIAL = /\x1b(?:\[(?:\?(?:1(?:0(?:4(?:[79])?)?)?|4(?:7)?)?)?)?$/;
const CLEAR = '\x1b[2J';

export class AltScreenFilter {
  private carry = '';

  /** The bytes to write locally, and whether the session left its alternate screen (repaint the normal one). */
  feed(chunk: Uint8Array): { out: Buffer; left: boolean } {
    // latin1 maps every byte to one char and back, so UTF-8 text passes through untouched.
    let text = this.carry + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    this.carry = '';
    const partial = PARTIAL.exec(text);
    if (partial) {
      this.carry = partial[0];
      text = text.slice(0, partial.index);
    }
    let left = false;
    const out = text.replace(SWITCH, (_m, which: string) => {
      left = which === 'l';
      return which === 'h' ? `\x1b[H${CLEAR}` : CLEAR;
    });
    return { out: Buffer.from(out, 'latin1'), left };
  }

  /** True while the end of a chunk is held back. */
  get holding(): boolean {
    return this.carry !== '';
  }

  /** Whatever a partial switch held back (the stream ended, or a repaint replaces it). */
  flush(): Buffer {
    const rest = Buffer.from(this.carry, 'latin1');
    this.carry = '';
    return rest;
  }
}
