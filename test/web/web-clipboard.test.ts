// OSC 52 in the web page (docs/security.md), in real headless Chromium against the real router and
// shell: a program's clipboard write found in the replayed history or a Keyframe writes nothing
// and asks nothing; a live one asks once per session in this tab (Allow writes it and the later
// ones, Deny drops them), and a reload keeps the answer. The page's clipboard is a stub that
// records what is written.
import { afterEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import { waitForText } from '../helpers/browser.ts';
import { pageFixture } from '../helpers/page-fixture.ts';

const live = pageFixture();
const clients: PtyClient[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

/** What the page wrote to its clipboard since it loaded. */
const written = (page: Page) => page.evaluate(() => (window as unknown as { written: string[] }).written);

describe('OSC 52 in the web page', { timeout: 120_000 }, () => {
  it('never from the replay; a live one asks once, and the answer holds for the session in this tab', async () => {
    const server = await live.server();
    const browser = await live.browser();
    await browser.context.addInitScript(() => {
      const written: string[] = [];
      Object.assign(window, { written });
      Object.defineProperty(navigator, 'clipboard', { value: { writeText: async (t: string) => void written.push(t), readText: async () => '' } });
    });
    const id = server.defaultSession!.id;
    // Another participant's program sets the clipboard: once before the page is opened.
    const other = new PtyClient({ url: server.attachUrl(id), token: server.devToken, role: 'controller', label: 'other', webSocket: nodeWebSocket() });
    clients.push(other);
    await other.connect();
    let n = 0;
    const osc52 = (text: string) => {
      n++;
      other.send(`printf '\\033]52;c;%s\\007osc-done-%s\\n' $(printf '${text}' | base64) $((${n}*1000))\r`);
      return `osc-done-${n * 1000}`;
    };
    const before = osc52('from the past');
    await new Promise((r) => setTimeout(r, 300));

    const page = await browser.context.newPage();
    await page.goto(`${server.origin}/#token=${server.devToken}&session=${id}&label=me`);
    await waitForText(page, '#status', /^live$/);
    await waitForText(page, '#terminal .xterm-rows', new RegExp(before));
    expect(await written(page)).toEqual([]);
    expect(await page.locator('#clipboard-ask').isVisible()).toBe(false);

    await waitForText(page, '#terminal .xterm-rows', new RegExp(osc52('first live')));
    expect(await page.locator('#clipboard-ask').isVisible()).toBe(true);
    expect(await written(page)).toEqual([]);
    await page.locator('#clipboard-allow').click();
    expect(await written(page)).toEqual(['first live']);
    expect(await page.locator('#clipboard-ask').isVisible()).toBe(false);
    await waitForText(page, '#terminal .xterm-rows', new RegExp(osc52('second live')));
    await expect.poll(() => written(page)).toEqual(['first live', 'second live']);

    // A reload replays all three: none is written again; the answer holds for live ones.
    await page.reload();
    await waitForText(page, '#status', /^live$/);
    await waitForText(page, '#terminal .xterm-rows', /osc-done-3000/);
    expect(await written(page)).toEqual([]);
    await waitForText(page, '#terminal .xterm-rows', new RegExp(osc52('after reload')));
    await expect.poll(() => written(page)).toEqual(['after reload']);
    expect(await page.locator('#clipboard-ask').isVisible()).toBe(false);

    // Another tab asks again; Deny drops this one and the later ones.
    const tab = await browser.context.newPage();
    await tab.goto(`${server.origin}/#token=${server.devToken}&session=${id}&label=second-tab`);
    await waitForText(tab, '#status', /^live$/);
    await waitForText(tab, '#terminal .xterm-rows', new RegExp(osc52('denied')));
    expect(await tab.locator('#clipboard-ask').isVisible()).toBe(true);
    await tab.locator('#clipboard-deny').click();
    await waitForText(tab, '#terminal .xterm-rows', new RegExp(osc52('denied again')));
    expect(await tab.locator('#clipboard-ask').isVisible()).toBe(false);
    expect(await written(tab)).toEqual([]);
  });
});
