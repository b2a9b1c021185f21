// A real server and a real Chromium for a browser test file: each test starts what it needs, and
// both are stopped after it, whatever happened (the set-up every page test shared).
import { afterEach } from 'vitest';
import { launchChromium, type Browser } from './browser.ts';
import { startTestServer, type TestServer } from './server.ts';

export interface PageFixture {
  server(env?: Record<string, string>): Promise<TestServer>;
  browser(): Promise<Browser>;
}

/** Call once at the top of a test file: it registers the clean-up. */
export function pageFixture(): PageFixture {
  let server: TestServer | null = null;
  let browser: Browser | null = null;
  afterEach(async () => {
    await browser?.close();
    browser = null;
    await server?.stop();
    server = null;
  });
  return {
    async server(env = {}) {
      server = await startTestServer(env);
      return server;
    },
    async browser() {
      browser = await launchChromium();
      return browser;
    },
  };
}
