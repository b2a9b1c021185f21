// The web terminal fits its window without a clipped last row (issue 21): in real headless
// Chromium against the real router and shell, at a desktop size, an odd size and a phone's, after
// the controller's Resize came back, every row of the terminal is inside the visible area of its
// pane, and the pane has nothing to scroll.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { drawnSessionSize, openLivePage, typeInto } from '../helpers/browser.ts';
import { pageFixture } from '../helpers/page-fixture.ts';

const live = pageFixture();

interface Fit {
  /** Rows the terminal draws, and the session's size as the page shows it. */
  rows: number;
  sessionSize: string;
  /** How far the last row's bottom is inside the pane's visible area (negative: clipped), in px. */
  lastRowMargin: number;
  /** How far the widest row's right edge is inside the pane's visible area, in px. */
  rightMargin: number;
  /** What the pane could scroll, in px (0: nothing hidden). */
  paneScroll: { x: number; y: number };
}

function measure(page: Page): Promise<Fit> {
  return page.evaluate(() => {
    const pane = document.querySelector<HTMLElement>('#terminal')!;
    const rows = [...document.querySelectorAll<HTMLElement>('#terminal .xterm-rows > div')];
    const screen = document.querySelector<HTMLElement>('#terminal .xterm-screen')!.getBoundingClientRect();
    const box = pane.getBoundingClientRect();
    // The visible area: inside the borders, the padding included (the terminal may use it).
    const bottom = box.top + pane.clientTop + pane.clientHeight;
    const right = box.left + pane.clientLeft + pane.clientWidth;
    const last = rows.at(-1)!.getBoundingClientRect();
    return {
      rows: rows.length,
      sessionSize: document.querySelector('#size-info')?.textContent ?? '',
      lastRowMargin: bottom - last.bottom,
      rightMargin: right - screen.right,
      paneScroll: { x: pane.scrollWidth - pane.clientWidth, y: pane.scrollHeight - pane.clientHeight },
    };
  });
}

describe('the web terminal fits its window', { timeout: 120_000 }, () => {
  it('shows every row and column whole at a desktop size, an odd size and a phone size, with nothing to scroll', async () => {
    const server = await live.server();
    const browser = await live.browser();
    const id = server.defaultSession!.id;
    const page = await openLivePage(browser, `${server.origin}/#token=${server.devToken}&session=${id}&label=fit`, []);
    for (const viewport of [
      { width: 1200, height: 760 },
      { width: 803, height: 611 },
      { width: 390, height: 844 },
      { width: 1021, height: 397 },
    ]) {
      await page.setViewportSize(viewport);
      // The controller asks for the size that fits; the session's Resize comes back and the page
      // draws that many rows. Wait until what is drawn is what the session says.
      await drawnSessionSize(page);
      // Something on the last row (the cursor sent past the bottom stops there), so the check is
      // about a row that holds text.
      await typeInto(page, `clear; printf '\\033[999;1Hbottom-%s' ${viewport.width}`);
      await page.waitForFunction((tag) => (document.querySelector('#terminal .xterm-rows > div:last-child')?.textContent ?? '').includes(tag), `bottom-${viewport.width}`, { timeout: 15_000, polling: 50 });
      const fit = await measure(page);
      const what = `${viewport.width}×${viewport.height}: ${JSON.stringify(fit)}`;
      expect(fit.sessionSize, what).toMatch(new RegExp(`^\\d+×${fit.rows}$`));
      expect(fit.lastRowMargin, what).toBeGreaterThanOrEqual(0);
      expect(fit.rightMargin, what).toBeGreaterThanOrEqual(0);
      expect(fit.paneScroll, what).toEqual({ x: 0, y: 0 });
      const lastRow = await page.locator('#terminal .xterm-rows > div').last().innerText();
      expect(lastRow, what).toContain(`bottom-${viewport.width}`);
      expect(await page.locator('#size-banner').isVisible(), what).toBe(false);
    }
  });
});
