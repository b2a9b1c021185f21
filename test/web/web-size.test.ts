// The shared session's size in the web page (docs/protocol.md §5.5), in real headless Chromium
// against the real router and shell: a phone that joins and leaves gives the desktop its size
// back, a desktop window larger than the session shows the session's edge, and what the page lays
// over the terminal (the share panel, messages) never resizes the session.
// Screenshot: test-output/web-edge.png.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { drawnSessionSize, openLivePage, screenshot, typeInto, waitForText } from '../helpers/browser.ts';
import { pageFixture } from '../helpers/page-fixture.ts';
import type { TestServer } from '../helpers/server.ts';

const live = pageFixture();

/** The session's size as the server has it (REST). */
async function sessionSize(server: TestServer, id: string): Promise<string> {
  const res = await fetch(`${server.origin}/agents/local/sessions/${id}`, { headers: { authorization: `Bearer ${server.devToken}` } });
  const s = (await res.json()) as { terminal_size: { cols: number; rows: number } };
  return `${s.terminal_size.cols}×${s.terminal_size.rows}`;
}

/** The shell's own idea of its size, typed in `page`. */
async function sttySize(page: Page, tag: string): Promise<string> {
  await typeInto(page, `echo ${tag}-$(stty size | tr ' ' x)`);
  const text = await waitForText(page, '#terminal .xterm-rows', new RegExp(`${tag}-\\d+x\\d+`));
  const [rows, cols] = new RegExp(`${tag}-(\\d+)x(\\d+)`).exec(text)!.slice(1);
  return `${cols}×${rows}`;
}

describe('the session size in the web page', { timeout: 120_000 }, () => {
  it('a phone joins and leaves: the desktop gets its size back, and shows the session edge meanwhile', async () => {
    const server = await live.server();
    const browser = await live.browser();
    const id = server.defaultSession!.id;
    const problems: string[] = [];
    const desktop = await openLivePage(browser, `${server.origin}/#token=${server.devToken}&session=${id}&label=desktop`, problems);
    const desktopSize = await drawnSessionSize(desktop);
    expect(await sttySize(desktop, 'before')).toBe(desktopSize);

    const phone = await browser.context.newPage();
    await phone.setViewportSize({ width: 390, height: 700 });
    await phone.goto(`${server.origin}/#token=${server.devToken}&session=${id}&label=phone`);
    await waitForText(phone, '#status', /^live$/);
    const phoneSize = await drawnSessionSize(phone);
    expect(phoneSize).not.toBe(desktopSize);
    await waitForText(desktop, '#size-info', new RegExp(`^${phoneSize}$`));
    expect(await sessionSize(server, id)).toBe(phoneSize);

    // The desktop's window is larger than the session now: the cells end, the hatched edge shows.
    const edge = await desktop.evaluate(() => {
      const pane = document.querySelector('#terminal')!.getBoundingClientRect();
      const cells = document.querySelector('#terminal .xterm-screen')!.getBoundingClientRect();
      return { spare: pane.right - cells.right, pane: getComputedStyle(document.querySelector('#terminal')!).backgroundImage, cells: getComputedStyle(document.querySelector('#terminal .xterm-screen')!).backgroundColor };
    });
    expect(edge.spare).toBeGreaterThan(200);
    expect(edge.pane).toMatch(/gradient/);
    expect(edge.cells).toBe('rgb(16, 20, 24)');
    await screenshot(desktop, 'web-edge.png');

    await phone.close();
    await waitForText(desktop, '#size-info', new RegExp(`^${desktopSize}$`));
    expect(await drawnSessionSize(desktop)).toBe(desktopSize);
    expect(await sessionSize(server, id)).toBe(desktopSize);
    expect(await sttySize(desktop, 'after')).toBe(desktopSize);
    expect(problems).toEqual([]);
  });

  it('opening the share panel or a message does not resize the session', async () => {
    const server = await live.server();
    const browser = await live.browser();
    const id = server.defaultSession!.id;
    const problems: string[] = [];
    const page = await openLivePage(browser, `${server.origin}/#token=${server.devToken}&session=${id}&label=desktop`, problems);
    const size = await drawnSessionSize(page);
    const paneSize = () => page.evaluate(() => `${document.querySelector('#terminal')!.clientWidth}x${document.querySelector('#terminal')!.clientHeight}`);
    const pane = await paneSize();

    await page.locator('#share').click();
    await page.locator('#share-create').click();
    await waitForText(page, '#share-list', /until/);
    expect(await page.locator('#share-panel').isVisible()).toBe(true);
    // An upload says so; the same name again is refused (409), and says that.
    const file = { name: 'size-test.txt', mimeType: 'text/plain', buffer: Buffer.from('x') };
    await page.locator('#upload-input').setInputFiles(file);
    await waitForText(page, '#notice', /Uploaded size-test\.txt/);
    await page.locator('#upload-input').setInputFiles(file);
    await waitForText(page, '#error', /already there/);
    expect(await paneSize()).toBe(pane);
    // The page's resize waits 100 ms after its pane changes: long past that, nothing was asked.
    await page.waitForTimeout(1000);
    expect(await sessionSize(server, id)).toBe(size);
    expect(await page.locator('#size-info').textContent()).toBe(size);
    expect(problems).toEqual([]);
  });
});
