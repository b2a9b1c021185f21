// Nothing typed that the user did not type: a reload replays the session's recent output into
// xterm.js, which answers the terminal queries it finds there (DA, CPR, OSC 11, DECRQM, as printf
// and vim send them); those answers must not reach the shell, while a program that asks live still
// gets its answer. Real router, PTY host, /bin/sh, vim and headless Chromium; a library client
// watches the session's output, where the terminal's echo shows every byte the shell was sent (an
// ESC as `^[`).
import { describe, expect, it } from 'vitest';
import { openLivePage, typeInto, waitForText } from '../helpers/browser.ts';
import { TestClient } from '../helpers/client.ts';
import { pageFixture } from '../helpers/page-fixture.ts';
import { connectAgent, ok, outputOf, text, type TaskJson } from '../helpers/tasks.ts';

const fixture = pageFixture();

/** DA2 (what vim and tmux ask), DA1, CPR, the background colour (OSC 11), DECRQM of bracketed paste. */
const QUERIES = "printf '\\033[>c\\033[c\\033[6n\\033]11;?\\007\\033[?2004$p'; echo queried";

/** Polls GetTask until the task is terminal or `timeoutMs` passed; returns it as last read. */
async function settledTask(agent: TestClient, taskId: string, timeoutMs = 15_000): Promise<TaskJson> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = (await ok(agent, 'GetTask', { task_id: taskId })).task as TaskJson;
    if (!/SUBMITTED|WORKING/.test(task.status.state) || Date.now() > deadline) return task;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('replayed output types nothing', { timeout: 90_000 }, () => {
  it('answers live queries, but after a reload the shell gets no answer to the replayed ones and a queued task runs', async () => {
    const server = await fixture.server();
    const browser = await fixture.browser();
    const id = server.defaultSession!.id;
    const watcher = await TestClient.connect(server.attachUrl(id), { token: server.devToken });
    await watcher.join({ role: 'observer' });
    const problems: string[] = [];
    const page = await openLivePage(browser, `${server.origin}/#token=${server.devToken}&session=${id}&label=me`, problems);

    // Asked live, the page answers as a terminal does: the answers reach the shell (its echo shows
    // them, the last one DECRQM's `$y`); Ctrl-U then empties the line, as the user would.
    await typeInto(page, QUERIES);
    await watcher.waitForOutput('2$y');
    expect(watcher.output()).toContain('^[[>0;276;0c');
    await page.keyboard.press('Control+U');
    // vim asks the same at its start (CPR, DA2, OSC 10/11, DECRQM) and takes the answers itself.
    await typeInto(page, 'vim -u NONE -N');
    await watcher.waitForOutput('\x1b]11;?');
    await waitForText(page, '#terminal .xterm-rows', /~\s*~\s*~/);
    await typeInto(page, ':q');
    // Typed before vim has gone, the next line would be vim's: wait for the shell's prompt.
    // eslint-disable-next-line no-control-regex -- vim leaves the alternate screen with ESC[?1049l
    await watcher.waitFor(() => /\x1b\[\?1049l[\s\S]*[$#] $/.test(watcher.output()), 'the prompt after vim');
    await typeInto(page, 'echo before-$((1+1))');
    await waitForText(page, '#terminal .xterm-rows', /before-2/);
    await watcher.waitForOutput('before-2\r\n');

    const mark = watcher.output().length;
    await page.reload();
    await waitForText(page, '#status', /^live$/);
    // The replay has been drawn: the queries are in it (the line that printed them is on screen).
    await waitForText(page, '#terminal .xterm-rows', /queried[\s\S]*before-2/);

    // Nobody types: an agent's command finds the line empty and runs.
    const agent = await connectAgent(server.attachUrl(id), server.devToken);
    const queued = (await ok(agent, 'SendMessage', { message: text('echo task-$((2*3))'), configuration: { returnImmediately: true } })).task as TaskJson;
    const task = await settledTask(agent, queued.id);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(outputOf(task)).toBe('task-6\n');

    // What the page types after the reload is exactly what the user typed.
    await typeInto(page, 'echo after-$((6*7))');
    await watcher.waitForOutput('after-42\r\n');
    const since = watcher.output().slice(mark);
    expect(since).not.toContain('^[');
    // The prompt right after the task's end mark (BEL), then the line as typed, and its output.
    // eslint-disable-next-line no-control-regex -- the BEL that ends the mark is the point
    expect(since).toMatch(/\x07[$#] echo after-\$\(\(6\*7\)\)\r\nafter-42\r\n/);
    expect(problems).toEqual([]);
    agent.close();
    watcher.close();
  });
});
