// What `pty-ws attach` draws on the local terminal: the session's output without its own
// alternate-screen switches (screen-switch.ts) and, unless allowed, without OSC 52 clipboard
// writes (clipboard-filter.ts), repaints from Keyframes, and one-line notices
// (the attach banner, read-only, role changes, a session larger than the window), each taken
// away by a repaint a few seconds later, so a notice never stays over the session's screen.
import type { PtyClient } from '../../../client/pty-client.ts';
import type { Role } from '../../../client/types.ts';
import { ClipboardFilter } from './clipboard-filter.ts';
import { AltScreenFilter } from './screen-switch.ts';
import { KEYS_HELP, notice, REPAINT } from './terminal.ts';

/** How long a notice stays before the repaint that removes it. */
const NOTICE_MS = 4000;
/** A switch cut in two by a chunk's end waits this long at most for its second half. */
const CARRY_MS = 20;

export class AttachScreen {
  private readonly filter = new AltScreenFilter();
  /** Null with --clipboard: the session's programs may set the clipboard through the local terminal. */
  private readonly clipboard: ClipboardFilter | null;
  private clipboardTold = false;
  private carryTimer: ReturnType<typeof setTimeout> | undefined;
  private noticeTimer: ReturnType<typeof setTimeout> | undefined;
  /** The notice on screen now, drawn again over a repaint that comes before its time is up. */
  private shown: string | null = null;
  private bannerDue = true;
  private lastRole: Role | null = null;
  private larger = false;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly client: PtyClient,
    /** False when stdout is not a terminal: bytes pass through as they are, no notices. */
    private readonly tty: boolean,
    private readonly name: string,
    allowClipboard: boolean,
  ) {
    this.clipboard = allowClipboard ? null : new ClipboardFilter();
  }

  output(data: Uint8Array): void {
    if (!this.tty) {
      this.out.write(data);
      return;
    }
    const kept = this.clipboard?.feed(data);
    const { out, left } = this.filter.feed(kept?.out ?? data);
    this.out.write(out);
    // The program left its screen: the session's normal screen comes back from the server's emulator.
    if (left) this.client.requestKeyframe();
    clearTimeout(this.carryTimer);
    if (this.filter.holding) this.carryTimer = setTimeout(() => this.out.write(this.filter.flush()), CARRY_MS);
    if (kept?.dropped && !this.clipboardTold) {
      this.clipboardTold = true;
      this.say('pty-ws: a program tried to set your clipboard (OSC 52): not passed on · attach --clipboard allows it');
    }
  }

  repaint(snapshot: Uint8Array): void {
    this.filter.flush();
    this.out.write(REPAINT);
    this.output(snapshot);
    if (this.bannerDue) {
      this.bannerDue = false;
      this.say(this.banner());
    } else if (this.shown !== null) {
      this.out.write(notice(this.shown, this.window()));
    }
  }

  role(role: Role, reason: string | undefined): void {
    const before = this.lastRole;
    this.lastRole = role;
    if (before === null || before === role) return;
    this.say(role === 'controller' ? `pty-ws: you control ${this.name} now: your keys are sent · ${KEYS_HELP.observe}` : this.readOnly(reason));
  }

  /** The session or the window changed size: say so when the session no longer fits. */
  sizeChanged(): void {
    const larger = this.sizeProblem() !== null;
    if (larger && !this.larger) this.say(`pty-ws: ${this.sizeProblem()!}`);
    this.larger = larger;
  }

  dispose(): void {
    clearTimeout(this.carryTimer);
    clearTimeout(this.noticeTimer);
    if (this.tty) this.out.write(this.filter.flush());
  }

  private banner(): string {
    const parts = this.client.role === 'controller' ? [`pty-ws: attached to ${this.name} as controller`, KEYS_HELP.detach, KEYS_HELP.observe] : [this.readOnly(undefined)];
    const size = this.sizeProblem();
    this.larger = size !== null;
    if (size) parts.push(size);
    return parts.join(' · ');
  }

  private readOnly(reason: string | undefined): string {
    return `pty-ws: READ-ONLY, watching ${this.name}${reason ? ` (${reason})` : ''}: your keys are not sent · ${KEYS_HELP.control} · ${KEYS_HELP.detach}`;
  }

  private sizeProblem(): string | null {
    const g = this.client.geometry;
    const w = this.window();
    if (!g || (g.cols <= w.cols && g.rows <= w.rows)) return null;
    return `the session is ${g.cols}x${g.rows}, larger than this window (${w.cols}x${w.rows}): its right or bottom edge is cut off`;
  }

  private say(text: string): void {
    if (!this.tty) return;
    this.shown = text;
    this.out.write(notice(text, this.window()));
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => {
      this.shown = null;
      this.client.requestKeyframe();
    }, NOTICE_MS);
  }

  private window(): { cols: number; rows: number } {
    return { cols: this.out.columns, rows: this.out.rows };
  }
}
