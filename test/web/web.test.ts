// The web terminal in a real browser (headless Chromium): a controller types and sees output, an
// observer sees the same screen and cannot type, the window's size becomes the PTY's, and after the
// network is cut the page resumes with nothing lost or doubled. Screenshots go to test-output/.
import { afterEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import { launchChromium, screenText, screenshot, typeInto, waitForText, type Browser } from '../helpers/browser.ts';
import { ClientProbe, count } from '../helpers/probe.ts';
import { startProxy, type CuttableProxy } from '../helpers/proxy.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer | null = null;
let proxy: CuttableProxy | null = null;
let browser: Browser | null = null;
let direct: PtyClient | null = null;

afterEach(async () => {
  direct?.close();
  direct = null;
  await browser?.close();
  browser = null;
  await proxy?.close();
  proxy = null;
  await server?.stop();
  server = null;
});

async function openPage(fragment: string): Promise<Page> {
  const page = await browser!.context.newPage();
  const problems: string[] = [];
  // Uncaught exceptions only: the browser also logs the refused connections of the cut as errors.
  page.on('pageerror', (e) => problems.push(e.message));
  (page as Page & { problems: string[] }).problems = problems;
  await page.goto(`${proxy!.origin}/#${fragment}`);
  return page;
}

// A browser, a server and several processes on a shared 2-core machine: generous time, same assertions.
describe('web terminal', { timeout: 60_000 }, () => {
  it('controller types, observer watches read-only, window size follows, and a network cut heals', async () => {
    server = await startTestServer();
    proxy = await startProxy(server.port);
    browser = await launchChromium();
    const id = server.defaultSession!.id;
    const token = server.devToken!;

    const alice = await openPage(`token=${token}&session=${id}&label=alice`);
    await waitForText(alice, '#status', /^live$/);
    expect(alice.url()).not.toContain(token);
    expect(await alice.locator('#role').textContent()).toBe('CONTROLLER');
    await typeInto(alice, 'echo web-$((6*7))');
    await waitForText(alice, '#terminal .xterm-rows', /web-42/);

    const bob = await openPage(`token=${token}&session=${id}&observe=1&label=bob`);
    await waitForText(bob, '#status', /^live$/);
    expect(await bob.locator('#role').textContent()).toContain('OBSERVER');
    expect(await bob.locator('#observer-banner').isVisible()).toBe(true);
    await waitForText(bob, '#terminal .xterm-rows', /web-42/);
    await waitForText(alice, '#observers', /bob/);
    expect(await alice.locator('#controllers').textContent()).toContain('alice');
    expect(await bob.locator('#controllers').textContent()).toContain('alice');
    expect(await bob.locator('#observers').textContent()).toContain('(you)');

    await typeInto(bob, 'echo observer-typed');
    await typeInto(alice, 'echo sync-$((1+1))');
    await waitForText(bob, '#terminal .xterm-rows', /sync-2/);
    expect(await screenText(alice)).not.toContain('observer-typed');
    expect(await screenText(bob)).not.toContain('observer-typed');

    // The controller's window decides the PTY size: shrink it and the session follows.
    direct = new PtyClient({ url: server.attachUrl(id), token, role: 'observer', label: 'probe', webSocket: nodeWebSocket() });
    const probe = new ClientProbe(direct);
    await direct.connect();
    const before = direct.geometry!;
    await alice.setViewportSize({ width: 900, height: 520 });
    await probe.waitFor(() => direct!.geometry && direct!.geometry.cols < before.cols && direct!.geometry, 'a smaller PTY after the window shrank');
    await typeInto(alice, 'stty size');
    await waitForText(alice, '#terminal .xterm-rows', new RegExp(`${direct.geometry!.rows} ${direct.geometry!.cols}`));

    // Cut the network under both pages; the session goes on without them.
    proxy.cut({ refuse: true });
    await waitForText(alice, '#status', /reconnecting/);
    await waitForText(bob, '#status', /reconnecting/);
    await screenshot(alice, 'web-terminal-reconnecting.png');
    direct.requestRole('controller');
    await probe.waitFor(() => direct!.role === 'controller', 'the probe in control');
    direct.send('echo during-cut-$((3*5))\r');
    await probe.waitForOutput('during-cut-15');
    proxy.restore();

    await waitForText(alice, '#status', /^live$/, 20_000);
    await waitForText(bob, '#status', /^live$/, 20_000);
    await waitForText(alice, '#terminal .xterm-rows', /during-cut-15/);
    await waitForText(bob, '#terminal .xterm-rows', /during-cut-15/);
    await typeInto(alice, 'echo resumed-$((2+3))');
    await waitForText(bob, '#terminal .xterm-rows', /resumed-5/);
    await waitForText(alice, '#terminal .xterm-rows', /resumed-5/);
    for (const page of [alice, bob]) {
      const text = await screenText(page);
      expect(count(text, 'during-cut-15')).toBe(1);
      expect(count(text, 'web-42')).toBe(1);
    }
    expect(await screenText(bob)).toBe(await screenText(alice));
    await screenshot(alice, 'web-terminal-controller.png');
    await screenshot(bob, 'web-terminal-observer.png');
    for (const page of [alice, bob]) expect((page as Page & { problems: string[] }).problems).toEqual([]);
  });

  it('lists sessions, creates one and attaches to it; without a token it asks for one', async () => {
    server = await startTestServer();
    proxy = await startProxy(server.port);
    browser = await launchChromium();

    const page = await openPage('');
    await page.waitForSelector('#token-form:not([hidden])');
    await page.fill('#token-input', server.devToken!);
    await page.click('#token-form button');
    await waitForText(page, '#session-list', /default/);

    await page.fill('#create-form input[name=label]', 'from-the-page');
    await page.fill('#create-form input[name=command]', 'echo made-$((9*9)); exec sh');
    await page.click('#create-form button');
    await waitForText(page, '#status', /^live$/);
    await waitForText(page, '#terminal .xterm-rows', /made-81/);
    await waitForText(page, '#session-list', /from-the-page/);
    expect(page.url()).toMatch(/#session=[0-9a-f-]{36}$/);
    await screenshot(page, 'web-terminal-created.png');
  });
});
