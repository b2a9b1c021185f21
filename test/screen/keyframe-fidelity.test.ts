// A Keyframe written into a fresh terminal of its size gives the screen a page that saw every byte
// shows: cell by cell (characters, widths, colours, attributes), the cursor's place and visibility,
// the modes and the scroll region (docs/protocol.md §6.3). Then both take the same further output
// and must still agree: a scroll region the Keyframe lost would scroll different rows.
// In-process (Deno) and worker (Node) screens.
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerScreens } from '../../src/adapter/node/worker-screens.ts';
import { ScreenModel } from '../../src/screen/screen.ts';
import type { Logger } from '../../src/ports/logger.ts';
import type { Screen } from '../../src/ports/screen.ts';
import { pageTerminal, screenState as state, written } from '../helpers/terminal-state.ts';

const quiet: Logger = { log: () => undefined, child: () => quiet };
const workers = new WorkerScreens(quiet);
afterAll(() => workers.close());

const E = '\x1b';
/** [what, cols, rows, output (a number pair is a resize), further output after the Keyframe] */
const CASES: [string, number, number, (string | [number, number])[], string][] = [
  ['a cursor hidden by the program', 20, 4, ['prompt$ ', `${E}[?25l`], 'more'],
  ['a full-screen program: alternate screen, hidden cursor', 20, 4, [`main${E}[?1049h${E}[?25l${E}[2;3Hvim`], 'x'],
  ['a cursor hidden then shown by a soft reset', 20, 4, [`${E}[?25l${E}[2;3r`, `${E}[!p`, 'ab'], '\r\n\r\n\r\n\r\nc'],
  ['origin mode in a scroll region', 20, 6, [`${E}[2;5r${E}[?6h${E}[1;1Hin-region${E}[10;1Hbottom`], '\r\n\r\nscrolled'],
  ['a scroll region without origin mode', 20, 6, [`top${E}[2;4r${E}[4;1Hx`], '\n\ny\r\nz'],
  ['origin mode without a scroll region', 20, 4, [`${E}[?6h${E}[3;5Hat`], 'b'],
  ['a scroll region on the alternate screen', 20, 6, [`${E}[?1049h${E}[2;5r${E}[5;1Hlast`], '\r\n\r\nnext'],
  ['the normal screen keeps its scroll region through an alternate one', 20, 6, [`${E}[3;5r${E}[?1049h${E}[2;3rX${E}[?1049l${E}[5;1Hq`], '\r\n\r\nr'],
  ['a scroll region a resize dropped', 20, 6, [`${E}[2;4r`, [20, 5], `${E}[5;1Hz`], '\r\nw'],
  ['rows erased with a background colour', 20, 3, [`${E}[44m${E}[2J${E}[H${E}[0mx`], ''],
  ['a line erased with a background colour', 20, 3, [`a\r\n${E}[44m${E}[2K${E}[0m`], 'b'],
  ['the rest of the screen erased with a 256-colour background', 20, 4, [`ab\r\n${E}[48;5;202m${E}[J`], 'c'],
  ['an erase to the end of the line in true colour, cursor on the row', 20, 3, [`ab\r\n\r\n  ${E}[48;2;10;20;30m${E}[K`], 'c'],
  ['a TUI: background fill, scroll region, origin mode, hidden cursor', 20, 6, [`${E}[?1049h${E}[?25l${E}[46m${E}[2J${E}[2;5r${E}[?6h${E}[2;3H${E}[0;1mtitle${E}[43m`], '\r\n\r\n\r\n\r\nx'],
];

const screens: [string, (cols: number, rows: number) => Screen][] = [
  ['in process', (cols, rows) => new ScreenModel(cols, rows)],
  ['in the worker', (cols, rows) => workers.create(cols, rows)],
];

describe.each(screens)('a Keyframe from the screen %s', (_name, makeScreen) => {
  it.each(CASES)('repaints %s as the page shows it', async (_what, cols, rows, output, further) => {
    const screen = makeScreen(cols, rows);
    const page = pageTerminal(cols, rows);
    const encoder = new TextEncoder();
    let sequence = 0;
    for (const step of output) {
      if (typeof step === 'string') {
        screen.write(encoder.encode(step), ++sequence);
        await written(page, step);
      } else {
        screen.resize(step[0], step[1], ++sequence);
        page.resize(step[0], step[1]);
      }
    }
    const snap = await screen.snapshot();
    screen.dispose();
    const joiner = pageTerminal(snap.cols, snap.rows);
    await written(joiner, snap.snapshot);
    expect(await state(joiner)).toEqual(await state(page));

    await written(page, further);
    await written(joiner, further);
    expect(await state(joiner)).toEqual(await state(page));
    page.dispose();
    joiner.dispose();
  });
});
