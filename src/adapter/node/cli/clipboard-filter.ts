// OSC 52 (a program sets the clipboard) kept away from the local terminal by `pty-ws attach`
// unless `--clipboard` allows it. Many terminals honour it without asking, and in a shared
// session any participant's program can print it: a command put on your clipboard is a command
// you may paste into a shell of your own. The web page asks once per session instead; a CLI
// drawing the session on your screen has nowhere to ask, so it drops them and says so once
// (attach-screen.ts). Output replayed at a rejoin is never drawn (attach.ts), and a Keyframe's
// snapshot carries no OSC.
//
// The sequence is `ESC ] 52 ;` up to BEL or ST (`ESC \`), as terminals read it: CAN or SUB cancel
// it, and an ESC followed by anything but `\` ends it and starts the next sequence. Chunks may end
// anywhere, so a possible start at a chunk's end, or an ESC while dropping, waits for the next
// chunk (never flushed on a timer: half a start written out would let the rest through).

const START = '\x1b]52;';
/** What ends a dropped sequence: BEL, CAN, SUB, ESC. */
// eslint-disable-next-line no-control-regex -- the terminators are control characters
const END = /[\x07\x18\x1a\x1b]/g;

export class ClipboardFilter {
  private carry = '';
  private dropping = false;

  /** The bytes to write locally, and whether an OSC 52 was taken out of them. */
  feed(chunk: Uint8Array): { out: Buffer; dropped: boolean } {
    // latin1 maps every byte to one char and back, so UTF-8 text passes through untouched.
    const text = this.carry + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    this.carry = '';
    let out = '';
    let dropped = false;
    let i = 0;
    while (i < text.length) {
      if (this.dropping) {
        END.lastIndex = i;
        const end = END.exec(text);
        if (!end) break;
        if (end[0] !== '\x1b') {
          this.dropping = false;
          i = end.index + 1;
        } else if (end.index + 1 === text.length) {
          this.carry = '\x1b';
          break;
        } else {
          this.dropping = false;
          i = text[end.index + 1] === '\\' ? end.index + 2 : end.index;
        }
        continue;
      }
      const at = text.indexOf('\x1b', i);
      if (at < 0) {
        out += text.slice(i);
        break;
      }
      out += text.slice(i, at);
      const next = text.slice(at, at + START.length);
      if (next === START) {
        this.dropping = true;
        dropped = true;
        i = at + START.length;
      } else if (at + next.length === text.length && START.startsWith(next)) {
        this.carry = next;
        break;
      } else {
        out += '\x1b';
        i = at + 1;
      }
    }
    return { out: Buffer.from(out, 'latin1'), dropped };
  }
}
