// The page's messages: an error stays until it is dismissed, the page moves to another session or
// the thing that failed works again; a notice (an upload went through) goes by itself. Both float
// over the page (style.css .toasts), so neither ever changes the terminal's size.
import { show } from './dom.ts';

/** How long a notice stays. */
const NOTICE_MS = 8000;

export interface MessagesUi {
  error: HTMLElement;
  errorText: HTMLElement;
  errorClose: HTMLElement;
  notice: HTMLElement;
}

export class Messages {
  private noticeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly ui: MessagesUi) {
    ui.errorClose.addEventListener('click', () => this.clearError());
  }

  error(message: string): void {
    this.ui.errorText.textContent = message;
    show(this.ui.error, true);
  }

  /** The error shown now, if any. */
  get shownError(): string | null {
    return this.ui.error.hidden ? null : this.ui.errorText.textContent;
  }

  /** Takes the error away; with `only`, only if it is that one (a later, different error stays). */
  clearError(only?: string | null): void {
    if (only !== undefined && this.shownError !== only) return;
    show(this.ui.error, false);
  }

  /** Something worked: said for a while, and an earlier error about it is no longer true. */
  notice(message: string): void {
    this.clearError();
    this.ui.notice.textContent = message;
    show(this.ui.notice, true);
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => this.clearNotice(), NOTICE_MS);
  }

  clearNotice(): void {
    clearTimeout(this.noticeTimer);
    show(this.ui.notice, false);
  }

  /** A new view: nothing said about the old one holds. */
  clearAll(): void {
    this.clearError();
    this.clearNotice();
  }
}
