// Headless Chromium (Debian's `chromium`) driven by playwright-core, with a fresh profile per launch.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Where tests leave screenshots for people to look at (git-ignored). */
export const TEST_OUTPUT = new URL('../../test-output/', import.meta.url).pathname;

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'pty-ws-chromium-'));
  // Without the background-networking flags Chromium phones home, and this machine's closed network refuses it.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1200, height: 760 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where the screenshots the README and docs/web.md show are kept (docs/screenshots/, checked in). */
export const README_SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url).pathname;

/**
 * A screenshot in test-output/. One the docs show (`readme`) is copied to docs/screenshots/
 * too when PTY_WS_README_SCREENSHOTS=1: the checked-in pictures are taken by the browser tests,
 * and only on purpose (they differ a little at every run).
 */
export async function screenshot(page: Page, name: string, opts: { readme?: boolean } = {}): Promise<string> {
  mkdirSync(TEST_OUTPUT, { recursive: true });
  const path = join(TEST_OUTPUT, name);
  await page.screenshot({ path });
  if (opts.readme && process.env.PTY_WS_README_SCREENSHOTS === '1') {
    mkdirSync(README_SCREENSHOTS, { recursive: true });
    copyFileSync(path, join(README_SCREENSHOTS, name));
  }
  return path;
}

/** The terminal's visible rows, as the xterm.js DOM renderer shows them. */
export function screenText(page: Page): Promise<string> {
  return page.locator('#terminal .xterm-rows').innerText();
}

/** Waits until `selector`'s text matches. */
export async function waitForText(page: Page, selector: string, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  await page.waitForFunction(
    ([sel, src, flags]) => new RegExp(src!, flags).test(document.querySelector(sel!)?.textContent ?? ''),
    [selector, pattern.source, pattern.flags],
    { timeout: timeoutMs, polling: 50 },
  );
  return (await page.locator(selector).textContent()) ?? '';
}

/** Clicks into the terminal, types `text` and presses Enter. */
export async function typeInto(page: Page, text: string): Promise<void> {
  await page.locator('#terminal .xterm').click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

/** A new tab on the page at `url`, live in its session; its script errors go into `problems`. */
export async function openLivePage(browser: Browser, url: string, problems: string[]): Promise<Page> {
  const page = await browser.context.newPage();
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(url);
  await waitForText(page, '#status', /^live$/);
  return page;
}

/** The session's size as the page's bar shows it, once the terminal draws that many rows. */
export async function drawnSessionSize(page: Page): Promise<string> {
  await page.waitForFunction(
    () => {
      const rows = document.querySelectorAll('#terminal .xterm-rows > div').length;
      return new RegExp(`×${rows}$`).test(document.querySelector('#size-info')?.textContent ?? '');
    },
    undefined,
    { timeout: 15_000, polling: 50 },
  );
  return (await page.locator('#size-info').textContent()) ?? '';
}
