// The page across a router restart on the same state dir and port, as Ctrl-C and `npm start` again
// do (headless Chromium): on the tmux default session it rejoins by itself, the shell's cwd kept;
// on a native one, which ends with the server, it moves to the new default session, and the ended
// one folds away under "ended (1)".
import { afterEach, describe, expect, it } from 'vitest';
import { launchChromium, openLivePage, screenText, typeInto, waitForText, type Browser } from '../helpers/browser.ts';
import { startTestServer, stopWithMultiplexers, type TestServer } from '../helpers/server.ts';

// The dev token survives the restart, as with `npm start`: the open page keeps working.
const KEEP = { PTY_WS_DEV_TOKEN_POLICY: 'keep' };
let server: TestServer | null = null;
let browser: Browser | null = null;

afterEach(async () => {
  await browser?.close();
  browser = null;
  if (server) await stopWithMultiplexers(server);
  server = null;
});

/** Ctrl-C and start again: the same state dir and port. */
async function restart(s: TestServer, env: Record<string, string>): Promise<TestServer> {
  server = null;
  await s.stop({ keepDir: true });
  server = await startTestServer(env, { port: String(s.port) }, { dir: s.dir, defaultSession: true });
  return server;
}

describe('the page across a restart', { timeout: 90_000 }, () => {
  it('rejoins the tmux default session by itself, its cwd kept', async () => {
    const env = { ...KEEP, PTY_WS_DEFAULT_SESSION_BACKEND: 'auto' };
    const first = (server = await startTestServer(env));
    const id = first.defaultSession!.id;
    browser = await launchChromium();
    const problems: string[] = [];
    const page = await openLivePage(browser, `${first.origin}/#token=${first.devToken}&session=${id}&label=me`, problems);
    // Done before the restart: input still in flight when the router stops may be lost.
    await typeInto(page, 'cd /tmp && echo "be:$(pwd):fore"');
    await page.waitForFunction(() => document.querySelector('#terminal .xterm-rows')?.textContent?.includes('be:/tmp:fore'));

    const again = await restart(first, env);
    expect(again.defaultSession!.id).toBe(id);
    await waitForText(page, '#status', /^live$/, 30_000);
    await typeInto(page, 'echo "at:$(pwd):ta"');
    await page.waitForFunction(() => document.querySelector('#terminal .xterm-rows')?.textContent?.includes('at:/tmp:ta'));
    expect(page.url()).toContain(`session=${id}`);
    expect(await page.locator('#error').isVisible()).toBe(false);
    expect(problems).toEqual([]);
  });

  it('moves from a native default session that ended with the server to the new one', async () => {
    const first = (server = await startTestServer(KEEP));
    const id = first.defaultSession!.id;
    browser = await launchChromium();
    const problems: string[] = [];
    const page = await openLivePage(browser, `${first.origin}/#token=${first.devToken}&session=${id}&label=me`, problems);

    const again = await restart(first, KEEP);
    const next = again.defaultSession!.id;
    expect(next).not.toBe(id);
    await page.waitForFunction((want) => location.hash.includes(`session=${want}`), next, { timeout: 30_000 });
    await waitForText(page, '#status', /^live$/, 30_000);
    await typeInto(page, 'echo moved-$((6*7))');
    await page.waitForFunction(() => document.querySelector('#terminal .xterm-rows')?.textContent?.includes('moved-42'));
    expect(await screenText(page)).toContain('moved-42');
    // One live default card; the ended one folded away.
    await waitForText(page, '#session-list', /ended \(1\)/);
    expect(await page.locator('#session-list > li.session').count()).toBe(1);
    expect(await page.locator('#session-list details.ended-fold').getAttribute('open')).toBeNull();
    expect(await page.locator('#error').isVisible()).toBe(false);
    expect(problems).toEqual([]);
  });
});
