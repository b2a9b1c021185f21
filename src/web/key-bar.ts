// The key bar for phones and tablets: Esc, a sticky Ctrl, Tab and the arrows, the keys
// an on-screen keyboard lacks. Ctrl applies to the next key typed on the keyboard (Ctrl then c
// sends Ctrl-C), then releases.
import { h } from './dom.ts';

const KEYS: Array<[label: string, bytes: string, title: string]> = [
  ['Esc', '\x1b', 'Escape'],
  ['Tab', '\t', 'Tab'],
  ['←', '\x1b[D', 'Left'],
  ['↑', '\x1b[A', 'Up'],
  ['↓', '\x1b[B', 'Down'],
  ['→', '\x1b[C', 'Right'],
];

export class KeyBar {
  private ctrl = false;
  private readonly ctrlButton: HTMLButtonElement;

  constructor(
    bar: HTMLElement,
    private readonly send: (data: string) => void,
    /** Gives the keyboard back to the terminal after a tap on the bar. */
    private readonly refocus: () => void,
  ) {
    this.ctrlButton = h('button', { type: 'button', class: 'key ctrl', title: 'Ctrl: applies to the next key', 'aria-pressed': 'false' }, 'Ctrl');
    this.ctrlButton.addEventListener('click', () => {
      this.setCtrl(!this.ctrl);
      this.refocus();
    });
    const keys = KEYS.map(([label, bytes, title]) => {
      const b = h('button', { type: 'button', class: 'key', title }, label);
      b.addEventListener('click', () => {
        this.send(bytes);
        this.refocus();
      });
      return b;
    });
    bar.replaceChildren(keys[0]!, this.ctrlButton, ...keys.slice(1));
  }

  /** Keyboard input on its way to the session: with Ctrl armed, a letter becomes its control code. */
  transform(data: string): string {
    if (!this.ctrl || data.length !== 1) return data;
    this.setCtrl(false);
    const code = data.toUpperCase().charCodeAt(0);
    // @ A–Z [ \ ] ^ _ map to 0x00–0x1f; anything else goes as typed.
    return code >= 0x40 && code <= 0x5f ? String.fromCharCode(code - 0x40) : data;
  }

  private setCtrl(on: boolean): void {
    this.ctrl = on;
    this.ctrlButton.classList.toggle('armed', on);
    this.ctrlButton.setAttribute('aria-pressed', String(on));
  }
}
