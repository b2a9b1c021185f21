// Wide characters in the web page (issue 21), in real headless Chromium against the real router,
// PTY host and bash: emoji typed and edited on the command line land where bash's line editor puts
// them (two cells each, Unicode 11 as the server's screen measures them), and a page that joins
// later repaints the same screen from its Keyframe (docs/protocol.md §6.3).
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openLivePage } from '../helpers/browser.ts';
import { pageFixture } from '../helpers/page-fixture.ts';

const live = pageFixture();

interface Drawn {
  /** The visible rows as the DOM renderer shows them. */
  rows: string[];
  /** The cursor's cell: column (from where it is drawn, in cell widths) and row. */
  cursor: [number, number];
}

/** What the page draws: rows and where the cursor is, measured in cells from the DOM renderer. */
function drawn(page: Page): Promise<Drawn> {
  return page.evaluate(() => {
    const screen = document.querySelector<HTMLElement>('#terminal .xterm-screen')!;
    const rows = [...document.querySelectorAll<HTMLElement>('#terminal .xterm-rows > div')];
    const cols = Number(/^(\d+)×/.exec(document.querySelector('#size-info')!.textContent ?? '')![1]);
    const cellWidth = screen.getBoundingClientRect().width / cols;
    const cursor = document.querySelector<HTMLElement>('#terminal .xterm-rows .xterm-cursor')!;
    const row = cursor.parentElement!;
    const x = (cursor.getBoundingClientRect().left - row.getBoundingClientRect().left) / cellWidth;
    return { rows: rows.map((r) => r.textContent!.replace(/\s+$/, '')), cursor: [Math.round(x), rows.indexOf(row)] as [number, number] };
  });
}

/** Waits until the page's cursor is at `col` on a row that reads `text` (bash redraws a line in pieces). */
async function cursorAt(page: Page, col: number, text: string): Promise<Drawn> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const d = await drawn(page);
    if (d.cursor[0] === col && d.rows[d.cursor[1]] === text) return d;
    if (Date.now() > deadline) throw new Error(`cursor at ${d.cursor.join(',')} on ${JSON.stringify(d.rows[d.cursor[1]])}, not at column ${col} on ${JSON.stringify(text)}`);
    await page.waitForTimeout(50);
  }
}

describe('wide characters in the web terminal', { timeout: 120_000 }, () => {
  it('edits emoji on a bash command line cell-exactly, and a late joiner repaints the same screen', async () => {
    // bash's line editor (the test default is /bin/sh, which has none) in a UTF-8 locale.
    const server = await live.server({ SHELL: '/bin/bash', PTY_WS_DEFAULT_SHELL: '/bin/bash --norc --noprofile', LANG: 'C.UTF-8' });
    const browser = await live.browser();
    const id = server.defaultSession!.id;
    const problems: string[] = [];
    const page = await openLivePage(browser, `${server.origin}/#token=${server.devToken}&session=${id}&label=me`, problems);
    await page.locator('#terminal .xterm').click();
    await page.keyboard.type("PS1='$ '");
    await page.keyboard.press('Enter');
    const prompt = (await cursorAt(page, 2, '$')).cursor[1];

    // `echo [` is 6 cells, each emoji 2, `]` 1.
    await page.keyboard.type('echo [😀😀]');
    await cursorAt(page, 2 + 11, '$ echo [😀😀]');
    await page.keyboard.press('ArrowLeft');
    await cursorAt(page, 2 + 10, '$ echo [😀😀]');
    await page.keyboard.press('Backspace');
    await cursorAt(page, 2 + 8, '$ echo [😀]');
    await page.keyboard.press('End');
    await cursorAt(page, 2 + 9, '$ echo [😀]');
    await page.keyboard.press('Enter');
    // The shell ran what the line showed: one emoji left.
    const done = await cursorAt(page, 2, '$');
    expect(done.rows.slice(done.cursor[1] - 2, done.cursor[1] + 1)).toEqual(['$ echo [😀]', '[😀]', '$']);
    expect(done.cursor[1]).toBeGreaterThan(prompt);

    // A page that joins now is repainted by a Keyframe of the server's screen: the same cells.
    const late = await openLivePage(browser, `${server.origin}/#token=${server.devToken}&session=${id}&observe=1&label=late`, problems);
    await cursorAt(late, 2, '$');
    expect(await drawn(late)).toEqual(await drawn(page));
    expect(problems).toEqual([]);
  });
});
