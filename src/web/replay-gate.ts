// What the terminal says while it draws the past is not input. xterm.js answers the queries it
// parses (DA `ESC[c`/`ESC[>c`, CPR `ESC[6n`, OSC 10/11 colours, DECRQM `ESC[?…$p`) through the
// same data event as keystrokes. Asked live, by a program waiting for the answer, that is right;
// found in a scrollback replay or drawn from a Keyframe, the asker is long gone and the answer
// would land in the shell as typed garbage (docs/protocol.md §6.1, §6.3).
//
// xterm.js parses writes in order, some time after `write` returns (a large replay over several
// turns of the event loop), and calls a write's callback right after parsing that write, before
// the next one. So the oldest write not yet called back is the one being parsed: while that one is
// the past, whatever the terminal emits is dropped. Keys pressed in that moment go too: the screen
// they were pressed on is not drawn yet.
import type { Terminal } from '@xterm/xterm';

export class ReplayGate {
  /** One flag per write xterm.js has not parsed yet, oldest first: true for the past. */
  private readonly pending: boolean[] = [];

  constructor(private readonly term: Pick<Terminal, 'write'>) {}

  /** Writes `data`; `past`: replayed output or a Keyframe's snapshot, whose queries go unanswered. */
  write(data: string | Uint8Array, past: boolean): void {
    // Pushed first: after a keystroke xterm.js may parse the write (and call back) within `write`.
    this.pending.push(past);
    this.term.write(data, () => this.pending.shift());
  }

  /** False while the terminal parses the past: what it emits now is no one's input. */
  get open(): boolean {
    return this.pending[0] !== true;
  }
}
