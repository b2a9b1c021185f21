// The session's size against this page's (docs/protocol.md §5.5): the size in the bar; a page too
// small for the session says so in a banner instead of clipping silently, a larger one shows the
// session's edge (the pane hatched outside its cells, style.css).
import type { Geometry } from '../client/types.ts';
import { show } from './dom.ts';

export interface SizeUi {
  info: HTMLElement;
  banner: HTMLElement;
  pane: HTMLElement;
}

export class SizeView {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly ui: SizeUi) {}

  /** `session`: its size; `fits`: what this page could show (null before the first Keyframe). */
  show(session: Geometry | null, fits: Geometry | null): void {
    const { info, banner, pane } = this.ui;
    info.textContent = session ? `${session.cols}×${session.rows}` : '';
    clearTimeout(this.timer);
    const smaller = session !== null && fits !== null && (fits.cols < session.cols || fits.rows < session.rows);
    pane.classList.toggle('edge', session !== null && fits !== null && (fits.cols > session.cols || fits.rows > session.rows));
    if (!smaller) return show(banner, false);
    // Only once it lasts: a controller's own font or window change is smaller for the moment its
    // resize takes to come back.
    this.timer = setTimeout(() => {
      banner.textContent = `This window shows ${Math.min(fits.cols, session.cols)}×${Math.min(fits.rows, session.rows)} of the session's ${session.cols}×${session.rows}: scroll to see the rest, or make the window larger or the font smaller (another controller's window sets the size).`;
      show(banner, true);
    }, 800);
  }

  hide(): void {
    clearTimeout(this.timer);
    show(this.ui.banner, false);
    this.ui.pane.classList.remove('edge');
  }
}
