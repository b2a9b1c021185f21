// The web terminal's comfort features (issue 21) in real headless Chromium against the real
// router, PTY host and shell: scrollback after a reload (not only the screen), theme and font size
// remembered, the tab title from the title sequence, the size policy (a page smaller than the
// session says so), the phone layout (drawer sidebar, key bar with a sticky Ctrl).
// Screenshots: test-output/web-light.png, test-output/web-phone.png.
import { afterEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import { launchChromium, openLivePage, screenshot, typeInto, waitForText, type Browser } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer | null = null;
let browser: Browser | null = null;
const clients: PtyClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await browser?.close();
  browser = null;
  await server?.stop();
  server = null;
});

/** The text of the terminal's rows after scrolling up to the top of its scrollback (the mouse wheel). */
async function topOfScrollback(page: Page): Promise<string> {
  await page.locator('#terminal .xterm-screen').hover();
  let before = '';
  for (;;) {
    // xterm.js scrolls a few lines per wheel event: keep turning until the rows stop changing.
    for (let i = 0; i < 10; i++) await page.mouse.wheel(0, -1000);
    await page.waitForTimeout(100);
    const rows = await page.locator('#terminal .xterm-rows').innerText();
    if (rows === before) return rows;
    before = rows;
  }
}

describe('web terminal comfort', { timeout: 120_000 }, () => {
  it('keeps scrollback across a reload, remembers theme and font size, takes the tab title from the terminal', async () => {
    server = await startTestServer();
    browser = await launchChromium();
    const id = server.defaultSession!.id;
    const problems: string[] = [];
    const page = await openLivePage(browser, `${server.origin}/#token=${server.devToken}&session=${id}&label=me`, problems);
    await typeInto(page, 'for i in $(seq 1 200); do echo line-$i; done');
    await waitForText(page, '#terminal .xterm-rows', /line-200/);

    await page.reload();
    await waitForText(page, '#status', /^live$/);
    await waitForText(page, '#terminal .xterm-rows', /line-200/);
    // The lines that scrolled off before the reload are in the scrollback again.
    expect(await topOfScrollback(page)).toMatch(/^line-1$/m);

    await typeInto(page, "printf '\\033]0;build-%s\\007' $((6*7))");
    await page.waitForFunction(() => document.title === 'build-42 · pty-ws', undefined, { timeout: 10_000 });

    const fontSize = () => page.evaluate(() => getComputedStyle(document.querySelector('#terminal .xterm-rows')!).fontSize);
    expect(await fontSize()).toBe('14px');
    await page.locator('#theme').click();
    await page.locator('#font-larger').click();
    await page.locator('#font-larger').click();
    expect(await page.evaluate(() => document.body.classList.contains('theme-light'))).toBe(true);
    await page.waitForFunction(() => getComputedStyle(document.querySelector('#terminal .xterm-rows')!).fontSize === '16px');
    await screenshot(page, 'web-light.png', { readme: true });
    await page.reload();
    await waitForText(page, '#status', /^live$/);
    expect(await page.evaluate(() => document.body.classList.contains('theme-light'))).toBe(true);
    expect(await fontSize()).toBe('16px');
    expect(await page.locator('#theme').textContent()).toBe('Dark');
    expect(problems).toEqual([]);
  });

  it('shows the session size and says when the page is smaller than the session', async () => {
    server = await startTestServer();
    browser = await launchChromium();
    const id = server.defaultSession!.id;
    const big = new PtyClient({ url: server.attachUrl(id), token: server.devToken, role: 'controller', label: 'big-screen', size: { cols: 220, rows: 70 }, webSocket: nodeWebSocket() });
    clients.push(big);
    await big.connect();
    big.resize(220, 70);
    const page = await browser.context.newPage();
    await page.goto(`${server.origin}/#token=${server.devToken}&session=${id}&observe=1&label=watcher`);
    await waitForText(page, '#status', /^live$/);
    await waitForText(page, '#size-info', /^220×70$/);
    const banner = await waitForText(page, '#size-banner', /This window shows \d+×\d+ of the session's 220×70/);
    expect(await page.locator('#size-banner').isVisible(), banner).toBe(true);
    big.resize(80, 20);
    await waitForText(page, '#size-info', /^80×20$/);
    await page.waitForFunction(() => document.querySelector<HTMLElement>('#size-banner')?.hidden === true);
  });

  it('on a phone: the first screen is the list, then the sidebar is a drawer and the key bar sends Esc, a sticky Ctrl and arrows', async () => {
    server = await startTestServer();
    browser = await launchChromium();
    const id = server.defaultSession!.id;
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 390, height: 760 });
    await page.goto(`${server.origin}/#token=${server.devToken}`);
    await waitForText(page, '#session-list', /default/);
    expect(await page.locator('aside').isVisible()).toBe(true);
    await page.locator(`#session-list [data-session-id="${id}"] a.attach`).click();
    await waitForText(page, '#status', /^live$/);
    expect(await page.locator('aside').isVisible()).toBe(false);
    expect(await page.locator('#keybar').isVisible()).toBe(true);
    await page.locator('#sidebar-toggle').click();
    expect(await page.locator('aside').isVisible()).toBe(true);
    await screenshot(page, 'web-phone.png', { readme: true });
    await page.locator('#sidebar-toggle').click();
    expect(await page.locator('aside').isVisible()).toBe(false);

    await typeInto(page, 'cat -v');
    await page.waitForTimeout(300);
    await page.locator('#keybar button', { hasText: 'Esc' }).click();
    await page.locator('#keybar button', { hasText: 'Ctrl' }).click();
    await page.keyboard.type('x');
    await page.locator('#keybar button', { hasText: '←' }).click();
    await page.keyboard.press('Enter');
    await waitForText(page, '#terminal .xterm-rows', /\^\[\^X\^\[\[D/);
  });

  it('opens a printed URL on click, and finds text in the scrollback', async () => {
    server = await startTestServer();
    browser = await launchChromium();
    const id = server.defaultSession!.id;
    const page = await browser.context.newPage();
    await page.goto(`${server.origin}/#token=${server.devToken}&session=${id}&label=me`);
    await waitForText(page, '#status', /^live$/);
    // Quoted apart on the command line, so only the output line holds the whole URL.
    await typeInto(page, `for i in $(seq 1 120); do echo line-$i; done; echo "${server.origin}/heal""thz."`);
    await waitForText(page, '#terminal .xterm-rows', /\/healthz\./);

    const url = `${server.origin}/healthz`;
    const row = page.locator('#terminal .xterm-rows > div', { hasText: `${url}.` }).last();
    const box = (await row.boundingBox())!;
    await page.mouse.move(box.x + 30, box.y + box.height / 2);
    const opened = browser.context.waitForEvent('page');
    await page.mouse.click(box.x + 30, box.y + box.height / 2);
    // The link is the URL without the sentence's full stop (a new tab is about:blank until it navigates).
    const tab = await opened;
    await tab.waitForURL(url, { timeout: 10_000 });
    expect(tab.url()).toBe(url);

    await page.locator('#search').fill('LINE-42');
    await page.locator('#search').press('Enter');
    await waitForText(page, '#search-result', /^line \d+ of \d+$/);
    // xterm.js draws the scrolled rows on its next animation frame, which a loaded machine delays.
    await waitForText(page, '#terminal .xterm-rows', /line-42(?!\d)/);
    expect(await page.locator('#terminal .xterm-rows').innerText()).toMatch(/^line-42$/m);
    await page.locator('#search').press('Enter');
    await waitForText(page, '#search-result', /^no more matches$/);
  });

  it('copies the selection to the clipboard, and takes OSC 52 from the session once allowed', async () => {
    server = await startTestServer();
    browser = await launchChromium();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.origin });
    const id = server.defaultSession!.id;
    const page = await browser.context.newPage();
    await page.goto(`${server.origin}/#token=${server.devToken}&session=${id}&label=me`);
    await waitForText(page, '#status', /^live$/);
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

    await typeInto(page, 'echo copy-$((40+2))');
    await waitForText(page, '#terminal .xterm-rows', /copy-42/);
    const row = page.locator('#terminal .xterm-rows > div', { hasText: /^copy-42$/ }).last();
    const box = (await row.boundingBox())!;
    await page.mouse.dblclick(box.x + 12, box.y + box.height / 2);
    await expect.poll(clipboard, { timeout: 5000 }).toMatch(/^copy(-42)?$/);

    await page.locator('#terminal .xterm').click();
    // A live OSC 52 asks first (once per session in this tab: test/web/web-clipboard.test.ts).
    await typeInto(page, "printf '\\033]52;c;%s\\007' $(printf 'set by osc 52' | base64)");
    await page.locator('#clipboard-allow').click();
    await expect.poll(clipboard, { timeout: 5000 }).toBe('set by osc 52');
  });
});
