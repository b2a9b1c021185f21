// Command tasks on every session backend: native, tmux and screen, each for real (the
// multiplexers render the shell's output themselves, so the marks around a command must survive
// them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, stopWithMultiplexers, type TestServer } from '../helpers/server.ts';
import { connectAgent, outputOf, run } from '../helpers/tasks.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  if (server) await stopWithMultiplexers(server);
});

describe.each(['native', 'tmux', 'screen'])('command tasks on %s sessions', (backend) => {
  it('finish COMPLETED on status 0 and FAILED otherwise, with the output as the artifact', async () => {
    const s = await server.createSession({ session_backend: backend, terminal_size: { cols: 100, rows: 30 } });
    const c = await connectAgent(s.attach_url, server.devToken);

    const done = await run(c, 'echo hello-$((6*7))', 20_000);
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.status.message).toMatchObject({ parts: [{ text: 'exit status 0' }], metadata: { exit_code: 0 } });
    expect(outputOf(done)).toBe('hello-42\n');

    const failed = await run(c, 'echo oops >&2; ret() { return $1; }; ret 3', 20_000);
    expect(failed.status.state).toBe('TASK_STATE_FAILED');
    expect(failed.metadata?.exit_code).toBe(3);
    expect(outputOf(failed)).toBe('oops\n');

    // Several lines, and the same shell from one task to the next.
    await run(c, 'cd /tmp && export TASK_VAR=kept', 20_000);
    expect(outputOf(await run(c, 'pwd; echo $TASK_VAR; for i in 1 2 3; do echo "line $i"; done', 20_000))).toBe('/tmp\nkept\nline 1\nline 2\nline 3\n');
    // More lines than the terminal has rows. tmux draws its screen, not the stream: lines that
    // scroll off within one read of the pane never reach its client (docs/architecture.md,
    // "Command tasks"), so under tmux the artifact holds whole lines of the output, in order,
    // ending with the last (and now and then an empty line where tmux scrolled, then moved the
    // cursor, which plain text cannot show); native and screen keep every line.
    const lines = Array.from({ length: 80 }, (_, i) => `n${i + 1}\n`).join('');
    const long = await run(c, 'i=1; while [ $i -le 80 ]; do echo n$i; i=$((i+1)); done', 20_000);
    expect(long.status.state).toBe('TASK_STATE_COMPLETED');
    if (backend === 'tmux') {
      const got = outputOf(long).split('\n').filter((l) => l !== '').map((l) => Number(/^n(\d+)$/.exec(l)?.[1]));
      expect(got.at(-1)).toBe(80);
      expect(got.every((n, i) => n >= 1 && (i === 0 || n > got[i - 1]!)), outputOf(long)).toBe(true);
    }
    else expect(outputOf(long)).toBe(lines);
    c.close();
  }, 90_000);
});
