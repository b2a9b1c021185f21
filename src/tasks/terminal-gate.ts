// When the server may type a command into a terminal humans share: never into a half-typed line
// of a human still connected, never while someone is typing or a full-screen program has the
// screen, and not right after a Ctrl-C it sent (the shell needs a moment to print its prompt again).

const INTERRUPT_KEYS = new Set([0x03, 0x1a, 0x1c]);
/** Enter, Ctrl-C and Ctrl-U leave the shell's line empty. */
const LINE_DONE_KEYS = new Set([0x0d, 0x0a, 0x03, 0x15]);
/** Switching to or from the alternate screen (DECSET/DECRST 1049, 1047, 47): the last one wins. */
// eslint-disable-next-line no-control-regex -- the switch starts with ESC
const ALT_SCREEN = /\x1b\[\?(?:1049|1047|47)([hl])/g;
/** Longer than any switch, so one split across two chunks is found. */
const CARRY = 8;
/** The switches are ASCII; any one-byte decoding that keeps ASCII will do. */
const ONE_BYTE = new TextDecoder('latin1');
/**
 * Typed before a command into a line its humans left half-written: Ctrl-E (end of line, for
 * readline and zsh) then Ctrl-U (the line killed back to its start; in a terminal's canonical mode,
 * as under dash, the whole line with the Ctrl-E in it).
 */
export const CLEAR_LINE = '\x05\x15';

export class TerminalGate {
  /** The connected controllers whose keys left the shell's one line half-written. */
  private readonly lineOwners = new Set<string>();
  /** The line is half-written, but whoever wrote it has left: the next command clears it first. */
  private abandoned = false;
  private lastHumanInput = -Infinity;
  private settleUntil = -Infinity;
  private fullScreen = false;
  private tail = '';

  constructor(private readonly limits: { humanQuietMs: number; settleMs: number }) {}

  /** Controller `clientId` typed `data`; true when it holds an interrupt key (Ctrl-C, Ctrl-Z, Ctrl-\). */
  humanTyped(clientId: string, data: Uint8Array, now: number): boolean {
    if (data.length === 0) return false;
    this.lastHumanInput = now;
    // The shell has one line for all of them: whoever ends it ends it for everyone.
    if (LINE_DONE_KEYS.has(data[data.length - 1]!)) {
      this.lineOwners.clear();
      this.abandoned = false;
    } else {
      this.lineOwners.add(clientId);
    }
    return data.some((b) => INTERRUPT_KEYS.has(b));
  }

  /** `clientId`'s connection is gone: its half-written line holds nothing back any more. */
  humanLeft(clientId: string): void {
    if (this.lineOwners.delete(clientId) && this.lineOwners.size === 0) this.abandoned = true;
  }

  /** True once after the last writer of a half-written line left: type CLEAR_LINE before the command. */
  takeAbandonedLine(): boolean {
    const abandoned = this.abandoned;
    this.abandoned = false;
    return abandoned;
  }

  /** The terminal printed `data`: follows whether a full-screen program has the screen. */
  printed(data: Uint8Array): void {
    const esc = data.indexOf(0x1b);
    if (esc < 0 && !this.tail) return;
    const text = this.tail + ONE_BYTE.decode(esc < 0 ? data.subarray(0, CARRY) : data.subarray(this.tail ? 0 : esc));
    for (const m of text.matchAll(ALT_SCREEN)) this.fullScreen = m[1] === 'h';
    // A switch cut short by the chunk's end is kept for the next one (a whole one again is harmless).
    const last = text.lastIndexOf('\x1b');
    this.tail = last >= 0 && text.length - last < CARRY ? text.slice(last) : '';
  }

  /** The server sends Ctrl-C, the last one at `last`. */
  interrupted(last: number): void {
    this.settleUntil = last + this.limits.settleMs;
  }

  /** ms until the server's Ctrl-Cs have settled (0 when they have). */
  settlingFor(now: number): number {
    return Math.max(0, this.settleUntil - now);
  }

  /**
   * 0 when a command may be typed now; else ms to wait, or -1 to wait for the human or the program.
   * Under a multiplexer (`multiplexed`) the alternate screen is the multiplexer client's own, on
   * from its first byte, while a full-screen program inside it is drawn without any switch: the
   * stream cannot tell, so only the line and the humans are waited for (docs/architecture.md).
   */
  /** What a command waits for now, in words for the humans (the presence list), or null when nothing. */
  waitingFor(now: number, multiplexed = false): string | null {
    if (this.lineOwners.size > 0) return 'waiting for a human to finish their line';
    if (this.fullScreen && !multiplexed) return 'waiting for the full-screen program to exit';
    if (this.settlingFor(now) > 0) return 'waiting for the terminal to settle after Ctrl-C';
    if (this.lastHumanInput + this.limits.humanQuietMs > now) return 'waiting for the typing to pause';
    return null;
  }

  busyFor(now: number, multiplexed = false): number {
    if (this.lineOwners.size > 0 || (this.fullScreen && !multiplexed)) return -1;
    return Math.max(0, this.lastHumanInput + this.limits.humanQuietMs - now, this.settlingFor(now));
  }
}
