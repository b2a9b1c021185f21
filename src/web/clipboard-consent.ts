// Whether a program in the session may set this page's clipboard (OSC 52). Another participant's
// program can print the sequence as well as yours, so the page asks once per session, in this tab
// (sessionStorage: a reload keeps the answer, another tab asks again). While the question is open
// the latest text waits; Allow writes it (the click is the user's gesture the clipboard wants),
// Deny drops it and every later one. What a replay or a Keyframe holds never gets here
// (terminal-view.ts): the program that printed it is long gone.
import { show } from './dom.ts';

type Answer = 'allow' | 'deny';

export interface ConsentUi {
  box: HTMLElement;
  allow: HTMLElement;
  deny: HTMLElement;
}

const key = (sessionId: string) => `pty-ws.osc52.${sessionId}`;

export class ClipboardConsent {
  private waiting: string | null = null;
  private remembered: Answer | null = null;

  constructor(
    private readonly storage: Storage | null,
    private readonly sessionId: string,
    private readonly ui: ConsentUi,
    private readonly write: (text: string) => void,
  ) {
    ui.allow.onclick = () => this.answer('allow');
    ui.deny.onclick = () => this.answer('deny');
  }

  /** A program asked to put `text` on the clipboard. */
  request(text: string): void {
    const answer = this.answered();
    if (answer === 'allow') return this.write(text);
    if (answer === 'deny') return;
    this.waiting = text;
    show(this.ui.box, true);
  }

  /** The view goes: an open question goes with it, unanswered. */
  dispose(): void {
    this.waiting = null;
    show(this.ui.box, false);
  }

  private answer(a: Answer): void {
    try {
      this.storage?.setItem(key(this.sessionId), a);
    } catch {
      // Storage refused: the answer holds until the page is left.
    }
    this.remembered = a;
    show(this.ui.box, false);
    const text = this.waiting;
    this.waiting = null;
    if (a === 'allow' && text !== null) this.write(text);
  }

  private answered(): Answer | null {
    if (this.remembered) return this.remembered;
    try {
      const v = this.storage?.getItem(key(this.sessionId));
      return v === 'allow' || v === 'deny' ? v : null;
    } catch {
      return null;
    }
  }
}
