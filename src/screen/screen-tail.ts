// What @xterm/addon-serialize leaves out of a snapshot, as escape sequences to append after it
// (docs/protocol.md §6.3): a hidden cursor (DECTCEM), the scroll region (DECSTBM) and the cursor
// position under origin mode, and rows the serializer drops that were erased with a background colour.
// xterm's public API exposes neither the cursor's visibility nor the scroll region, so this watches
// the sequences that set them with parser hooks that only observe (they return false: xterm's own
// handler still runs) and mirrors what xterm 6 does with them.
import type xterm from '@xterm/headless';

type Terminal = InstanceType<typeof xterm.Terminal>;
type BufferType = 'normal' | 'alternate';
/** A scroll region's top and bottom rows (0-based); null is the whole screen. */
type Margins = readonly [number, number] | null;

const DECTCEM = 25;

export class SnapshotTail {
  private hidden = false;
  /** Margins are per buffer in xterm: the normal screen keeps its own under an alternate one. */
  private readonly margins: Record<BufferType, Margins> = { normal: null, alternate: null };

  constructor(private readonly term: Terminal) {
    const { parser } = term;
    parser.registerCsiHandler({ prefix: '?', final: 'h' }, (params) => this.decset(params, false));
    parser.registerCsiHandler({ prefix: '?', final: 'l' }, (params) => this.decset(params, true));
    parser.registerCsiHandler({ final: 'r' }, (params) => this.decstbm(params));
    // DECSTR shows the cursor and drops the active buffer's margins.
    parser.registerCsiHandler({ intermediates: '!', final: 'p' }, () => {
      this.hidden = false;
      this.margins[term.buffer.active.type] = null;
      return false;
    });
    // RIS makes new buffers (xterm 6 leaves the cursor's visibility as it was).
    parser.registerEscHandler({ final: 'c' }, () => {
      this.margins.normal = this.margins.alternate = null;
      return false;
    });
    // xterm clears the alternate buffer, margins included, when the normal one comes back.
    term.buffer.onBufferChange((active) => {
      if (active.type === 'normal') this.margins.alternate = null;
    });
  }

  /** xterm's resize sets both buffers' margins back to the whole screen. */
  resized(): void {
    this.margins.normal = this.margins.alternate = null;
  }

  /** Sequences that, written after the serializer's output, restore what it leaves out. */
  tail(): string {
    const buf = this.term.buffer.active;
    let out = erasedRows(this.term);
    const margins = this.margins[buf.type];
    // The serializer positions the cursor, then its modes' DECSET 6 homes it; DECSTBM homes it too.
    const origin = this.term.modes.originMode;
    if (margins) out += `\x1b[${margins[0] + 1};${margins[1] + 1}r`;
    if (margins || origin) {
      const top = origin && margins ? margins[0] : 0;
      out += `\x1b[${buf.cursorY - top + 1};${buf.cursorX + 1}H`;
    }
    if (this.hidden) out += `\x1b[?${DECTCEM}l`;
    return out;
  }

  private decset(params: (number | number[])[], hide: boolean): boolean {
    if (params.includes(DECTCEM)) this.hidden = hide;
    return false;
  }

  /** As xterm's setScrollRegion: defaults, clamped to the screen, ignored unless top < bottom. */
  private decstbm(params: (number | number[])[]): boolean {
    // Sub-parameters come as arrays after their parameter: they are not positions.
    const [first, second] = params.filter((p): p is number => typeof p === 'number');
    const rows = this.term.rows;
    const top = first || 1;
    const bottom = second === undefined || second === 0 || second > rows ? rows : second;
    if (bottom > top) this.margins[this.term.buffer.active.type] = top === 1 && bottom === rows ? null : [top - 1, bottom - 1];
    return false;
  }
}

/**
 * The serializer stops at the last row where text or a style change is: trailing rows erased with
 * the background colour it was last using (`ESC[44m` then `ESC[J`) are left out, and a fresh
 * terminal shows them uncoloured. Every trailing row without text is painted again here, between
 * DECSC and DECRC so the cursor and the pen the serializer left are kept. The cells' background is
 * all an erase leaves in xterm, and all ECH puts back.
 */
function erasedRows(term: Terminal): string {
  const buf = term.buffer.active;
  const cell = buf.getNullCell();
  let out = '';
  for (let y = term.rows - 1; y >= 0; y--) {
    const line = buf.getLine(buf.baseY + y);
    if (!line) break;
    let row = '';
    let x = 0;
    let text = false;
    while (x < term.cols && !text) {
      line.getCell(x, cell);
      text = cell.getChars() !== '';
      const bg = background(cell);
      let end = x + 1;
      while (!text && end < term.cols) {
        line.getCell(end, cell);
        if (cell.getChars() !== '' || background(cell) !== bg) break;
        end++;
      }
      if (!text && bg !== '') row += `\x1b[${y + 1};${x + 1}H\x1b[0;${bg}m\x1b[${end - x}X`;
      x = end;
    }
    if (text) break;
    out = row + out;
  }
  return out ? `\x1b7${out}\x1b8` : '';
}

/** The SGR parameters of a cell's background ('' for the default), as the serializer writes them. */
function background(cell: ReturnType<Terminal['buffer']['active']['getNullCell']>): string {
  const c = cell.getBgColor();
  if (cell.isBgRGB()) return `48;2;${(c >>> 16) & 0xff};${(c >>> 8) & 0xff};${c & 0xff}`;
  if (cell.isBgPalette()) return c >= 16 ? `48;5;${c}` : `${c & 8 ? 100 + (c & 7) : 40 + (c & 7)}`;
  return '';
}
