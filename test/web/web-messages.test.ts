// What the web page says stays true, in real headless Chromium against the real router and shell:
// after a lost token the page names the command that makes a new one, and a new `#token=` pasted
// into the open tab's address bar is taken at once, without a reload; an error goes when what
// failed works again, a search result when the search box is cleared, and a list the server no
// longer answers for says so instead of showing sessions "running".
import { describe, expect, it } from 'vitest';
import { openLivePage, typeInto, waitForText } from '../helpers/browser.ts';
import { pageFixture } from '../helpers/page-fixture.ts';

const live = pageFixture();

describe('the messages of the web page', { timeout: 90_000 }, () => {
  it('a token pasted into an open tab is taken without a reload, after a refused one; the page says how to get a new one', async () => {
    const server = await live.server();
    const browser = await live.browser();
    const id = server.defaultSession!.id;
    const problems: string[] = [];
    const page = await browser.context.newPage();
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${server.origin}/#token=not-the-token&session=${id}`);
    await waitForText(page, '#error', /refused this token.*npx pty-ws token/);
    expect(await page.locator('#token-form').isVisible()).toBe(true);
    expect(await page.locator('#token-form .hint').textContent()).toMatch(/npx pty-ws token/);
    // Anything a reload would lose.
    await page.evaluate(() => Object.assign(window, { stillThisPage: true }));

    await page.evaluate((fragment) => (location.hash = fragment), `#token=${server.devToken}&session=${id}`);
    await waitForText(page, '#status', /^live$/);
    expect(await page.locator('#token-form').isVisible()).toBe(false);
    expect(await page.locator('#error').isVisible()).toBe(false);
    expect(await page.evaluate(() => (window as unknown as { stillThisPage?: boolean }).stillThisPage)).toBe(true);
    // Taken out of the address bar, as at load.
    expect(page.url()).not.toContain('token=');
    expect(page.url()).toContain(`session=${id}`);
    expect(problems).toEqual([]);
  });

  it('an upload error goes with the next upload that works, a search result with the search, a list the server does not answer for says so', async () => {
    const server = await live.server();
    const browser = await live.browser();
    const id = server.defaultSession!.id;
    const problems: string[] = [];
    const page = await openLivePage(browser, `${server.origin}/#token=${server.devToken}&session=${id}&label=me`, problems);

    const file = (name: string) => ({ name, mimeType: 'text/plain', buffer: Buffer.from('x') });
    await page.locator('#upload-input').setInputFiles(file('one.txt'));
    await waitForText(page, '#notice', /Uploaded one\.txt/);
    await page.locator('#upload-input').setInputFiles(file('one.txt'));
    await waitForText(page, '#error', /already there/);
    await page.locator('#upload-input').setInputFiles(file('two.txt'));
    await waitForText(page, '#notice', /Uploaded two\.txt/);
    expect(await page.locator('#error').isVisible()).toBe(false);

    await typeInto(page, 'echo searchable');
    await page.locator('#search').fill('no such text anywhere');
    await page.locator('#search').press('Enter');
    await waitForText(page, '#search-result', /^not found$/);
    await page.locator('#search').fill('');
    await waitForText(page, '#search-result', /^$/);

    // The server stops answering the list: its sessions are not shown as running any more.
    await page.route('**/agents/local/sessions', (route) => route.abort());
    await page.locator('#refresh').click();
    await waitForText(page, '#session-list', /did not answer/);
    expect(await page.locator('#session-list').getAttribute('class')).toMatch(/stale/);
    await page.unroute('**/agents/local/sessions');
    await page.locator('#refresh').click();
    await page.waitForFunction(() => !document.querySelector('#session-list')!.classList.contains('stale'), undefined, { timeout: 10_000 });
    expect(await page.locator('#error').isVisible()).toBe(false);
    expect(problems).toEqual([]);
  });
});
