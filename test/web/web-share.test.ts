// Share links in a real browser (headless Chromium): a controller makes a watch link from the
// page's Share panel, a second tab opens it and watches (no Take control, no Share, its keys reach
// nothing) under the share's label, and revoking the link in the first tab ends the second one,
// which says the link was revoked, then and on a reload. Screenshots: test-output/.
import { describe, expect, it } from 'vitest';
import { screenshot, typeInto, waitForText } from '../helpers/browser.ts';
import { pageFixture } from '../helpers/page-fixture.ts';

const live = pageFixture();

describe('share links in the web page', { timeout: 90_000 }, () => {
  it('a watch link watches read-only and stops working when revoked', async () => {
    const server = await live.server();
    const browser = await live.browser();
    const id = server.defaultSession!.id;
    const owner = await browser.context.newPage();
    await owner.goto(`${server.origin}/#token=${server.devToken}&session=${id}&label=owner`);
    await waitForText(owner, '#status', /^live$/);

    await owner.locator('#share').click();
    await owner.locator('#share-form select[name=scope]').selectOption('pty:observe');
    await owner.locator('#share-form input[name=label]').fill('for-guest');
    await owner.locator('#share-create').click();
    await owner.waitForFunction(() => (document.querySelector<HTMLInputElement>('#share-url')?.value ?? '').includes('#token=pwshare_'));
    const link = await owner.locator('#share-url').inputValue();
    expect(new URL(link).search).toBe('');
    await waitForText(owner, '#share-list', /for-guest · watch/);
    await screenshot(owner, 'web-share-panel.png');

    const guest = await browser.context.newPage();
    const problems: string[] = [];
    guest.on('pageerror', (e) => problems.push(e.message));
    await guest.goto(link);
    await waitForText(guest, '#status', /^live$/);
    expect(await guest.locator('#role').textContent()).toBe('OBSERVER · read-only');
    expect(await guest.locator('#toggle-role').isVisible()).toBe(false);
    expect(await guest.locator('#share').isVisible()).toBe(false);
    expect(await guest.locator('#create-form').isVisible()).toBe(false);
    // The owner sees the guest by the share's label.
    await waitForText(owner, '#observers', /for-guest/);

    await typeInto(owner, 'echo shared-$((6*7))');
    await waitForText(guest, '#terminal .xterm-rows', /shared-42/);
    await typeInto(guest, 'echo guest-typed');
    await typeInto(owner, 'echo after-$((1+1))');
    await waitForText(guest, '#terminal .xterm-rows', /after-2/);
    expect(await guest.locator('#terminal .xterm-rows').innerText()).not.toContain('guest-typed');
    await screenshot(guest, 'web-share-guest.png');

    await owner.locator('#share-list button.revoke').click();
    await waitForText(owner, '#share-list', /No active shares/);
    await waitForText(guest, '#status', /^disconnected$/);
    await waitForText(guest, '#error-text', /^This link was revoked: ask whoever shared it for a new one\.$/);
    await guest.goto('about:blank');
    await guest.goto(link);
    await waitForText(guest, '#error-text', /^This link was revoked: ask whoever shared it for a new one\.$/);
    expect(await guest.locator('#token-form').isVisible()).toBe(false);
    expect(problems).toEqual([]);
  });
});
