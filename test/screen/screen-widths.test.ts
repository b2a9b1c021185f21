// The server's screen measures characters as the page does (Unicode 11: an emoji or a CJK
// character takes two cells), so a Keyframe repaints, cell by cell and cursor included, what a page
// that saw the same bytes shows (docs/protocol.md §6.3). In-process (Deno) and worker (Node) screens.
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerScreens } from '../../src/adapter/node/worker-screens.ts';
import { ScreenModel } from '../../src/screen/screen.ts';
import type { Logger } from '../../src/ports/logger.ts';
import type { Screen } from '../../src/ports/screen.ts';
import { pageTerminal, written, type Terminal } from '../helpers/terminal-state.ts';

const quiet: Logger = { log: () => undefined, child: () => quiet };
const workers = new WorkerScreens(quiet);
afterAll(() => workers.close());

/** Every row as its cells (characters and widths), and the cursor. */
function cells(term: Terminal): { rows: string[][]; cursor: [number, number] } {
  const buf = term.buffer.active;
  const rows: string[][] = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buf.getLine(buf.baseY + y)!;
    const row: string[] = [];
    for (let x = 0; x < term.cols; x++) {
      const cell = line.getCell(x)!;
      row.push(`${cell.getChars() || ' '}:${cell.getWidth()}`);
    }
    rows.push(row);
  }
  return { rows, cursor: [buf.cursorX, buf.cursorY] };
}

/** Output a shell's line editor would print: wide characters typed, then edited in place. */
const OUTPUT = [
  'a😀b', // a, a two-cell emoji, b: the cursor is at column 4
  '\bX', // back over b: X overwrites it (with one-cell emoji, X would land after b)
  '\r\n你好x\x1b[3D', // CJK: back to the second character
  '\x1b[K再', // erase to the end, then write another wide character
  '\r\n😀😀😀\b\b\x1b[P\x1b[P', // back to the third emoji and delete its two cells
];

const screens: [string, (cols: number, rows: number) => Screen][] = [
  ['in process', (cols, rows) => new ScreenModel(cols, rows)],
  ['in the worker', (cols, rows) => workers.create(cols, rows)],
];

describe.each(screens)('the screen %s', (_name, makeScreen) => {
  it('takes an emoji and a CJK character as two cells, and its snapshot repaints what a page shows', async () => {
    const screen = makeScreen(20, 4);
    const page = pageTerminal(20, 4);
    const encoder = new TextEncoder();
    OUTPUT.forEach((chunk, i) => screen.write(encoder.encode(chunk), i + 1));
    for (const chunk of OUTPUT) await written(page, chunk);

    const seen = cells(page);
    // What the edits leave, in the page's widths.
    expect(seen.rows[0]!.slice(0, 4)).toEqual(['a:1', '😀:2', ' :0', 'X:1']);
    expect(seen.rows[1]!.slice(0, 4)).toEqual(['你:2', ' :0', '再:2', ' :0']);
    expect(seen.rows[2]!.slice(0, 6)).toEqual(['😀:2', ' :0', '😀:2', ' :0', ' :1', ' :1']);
    expect(seen.cursor).toEqual([4, 2]);

    const snap = await screen.snapshot();
    expect(snap.anchor).toBe(OUTPUT.length);
    const joiner = pageTerminal(snap.cols, snap.rows);
    await written(joiner, snap.snapshot);
    expect(cells(joiner)).toEqual(seen);
    screen.dispose();
    page.dispose();
    joiner.dispose();
  });
});
