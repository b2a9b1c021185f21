// End to end (docs/protocol.md §6.3): a real PTY runs a program that paints as a TUI does (the
// alternate screen, a background fill, a scroll region, origin mode, the cursor hidden); a late
// joiner through the real router and a real WebSocket paints its join Keyframe into a fresh
// terminal and sees what a page that got every byte shows, then both take the same further output.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { pageTerminal, screenState, written } from '../helpers/terminal-state.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const E = '\x1b';
/** What the program prints: no newline, so the line discipline passes it through unchanged. */
const PAINTED = `${E}[?1049h${E}[?25l${E}[44m${E}[2J${E}[3;7r${E}[?6h${E}[2;4H${E}[0;1mready${E}[0;43m`;
const COLS = 30;
const ROWS = 8;

it('a late joiner of a TUI sees its hidden cursor, scroll region, cursor and background fill', async () => {
  const printf = PAINTED.replaceAll(E, '\\033');
  const s = await server.createSession({ command: `printf '${printf}'; exec sleep 60`, terminal_size: { cols: COLS, rows: ROWS } });
  const token = server.devToken;

  // The first viewer sees the whole paint (as Output, or in its own join Keyframe).
  const first = await TestClient.connect(s.attach_url, { token });
  await first.join({ role: 'observer' });
  await first.waitFor(() => (first.output() + first.screen()).includes('ready'), 'the program to paint');

  const late = await TestClient.connect(s.attach_url, { token });
  const frames = await late.join({ role: 'observer' });
  const keyframe = frames.at(-1)!;
  expect(keyframe.payload.kind).toBe('Keyframe');
  expect([keyframe.payload.snapshot_cols, keyframe.payload.snapshot_rows]).toEqual([COLS, ROWS]);

  const page = pageTerminal(COLS, ROWS);
  await written(page, PAINTED);
  const joiner = pageTerminal(COLS, ROWS);
  await written(joiner, late.screen() + late.output());
  expect(await screenState(joiner)).toEqual(await screenState(page));

  // Further output scrolls inside the region for both.
  const further = '\r\n\r\n\r\n\r\n\r\nafter';
  await written(page, further);
  await written(joiner, further);
  expect(await screenState(joiner)).toEqual(await screenState(page));
  page.dispose();
  joiner.dispose();
  first.close();
  late.close();
});
