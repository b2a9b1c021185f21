// The agent is visible (issue 21): a client with a task in the session appears in the page's
// presence list, badged "agent", with what it waits for — here a pty-ws connection that never
// joined (its task waits for the human's half-typed line) and an A2A client over JSON-RPC. Real
// router, PTY host, shell and headless Chromium. Screenshot: test-output/web-agent.png.
import { afterEach, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, waitForText, type Browser } from '../helpers/browser.ts';
import { a2aClient, send, userText } from '../helpers/a2a.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { connectAgent, stream, updateIn } from '../helpers/tasks.ts';
import type { TestClient } from '../helpers/client.ts';

let server: TestServer | null = null;
let browser: Browser | null = null;
let agent: TestClient | null = null;

afterEach(async () => {
  agent?.close();
  agent = null;
  await browser?.close();
  browser = null;
  await server?.stop();
  server = null;
});

describe('agents in the web page', { timeout: 90_000 }, () => {
  it('lists a task connection and an A2A client as agents, with what they wait for, until their task ends', async () => {
    server = await startTestServer();
    browser = await launchChromium();
    const id = server.defaultSession!.id;
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${server.origin}/#token=${server.devToken}&session=${id}&label=human`);
    await waitForText(page, '#status', /^live$/);
    await page.locator('#terminal .xterm').click();
    await page.keyboard.type('echo half-typed');
    // The human's keys have reached the shell (its echo) before the agent asks.
    await waitForText(page, '#terminal .xterm-rows', /echo half-typed/);

    agent = await connectAgent(server.attachUrl(id), server.devToken);
    const taskId = await stream(agent, 'echo agent-$((20+1))');
    await waitForText(page, '#controllers', /agent dev.*waiting for a human to finish their line/);
    expect(await page.locator('#controllers li.agent').count()).toBe(1);
    expect(await page.locator('#controllers li.me').textContent()).toMatch(/^human/);
    await screenshot(page, 'web-agent.png', { readme: true });

    // Ctrl-U empties the line: the command is typed, runs, and its sender leaves the list.
    await page.keyboard.press('Control+U');
    await updateIn(agent, taskId, 'TASK_STATE_COMPLETED');
    await waitForText(page, '#terminal .xterm-rows', /agent-21/);
    await page.waitForFunction(() => document.querySelectorAll('#controllers li.agent').length === 0, undefined, { timeout: 10_000 });

    // An A2A client (JSON-RPC) never joins: it is listed among the controllers while its task runs.
    const client = await a2aClient(server.origin, server.devToken!, 'JSONRPC');
    const sent = client.sendMessage(send({ message: userText('sleep 2; echo a2a-$((1+1))', { contextId: id }) }));
    await waitForText(page, '#controllers', /agent dev \(A2A\).*running a command/);
    await sent;
    await waitForText(page, '#terminal .xterm-rows', /a2a-2/);
    await page.waitForFunction(() => document.querySelectorAll('#controllers li.agent').length === 0, undefined, { timeout: 10_000 });
    expect(problems).toEqual([]);
  });
});
