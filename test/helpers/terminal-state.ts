// A page-like headless terminal and everything about its screen a Keyframe must reproduce
// (docs/protocol.md §6.3), for comparing a late joiner with a page that saw every byte.
import xterm from '@xterm/headless';
import unicode11 from '@xterm/addon-unicode11';

export type Terminal = InstanceType<typeof xterm.Terminal>;
type Cell = ReturnType<Terminal['buffer']['active']['getNullCell']>;

/** A terminal as the page sets it up (src/web/terminal-view.ts): Unicode 11 widths. */
export function pageTerminal(cols: number, rows: number): Terminal {
  const term = new xterm.Terminal({ cols, rows, scrollback: 0, allowProposedApi: true });
  term.loadAddon(new unicode11.Unicode11Addon() as unknown as Parameters<Terminal['loadAddon']>[0]);
  term.unicode.activeVersion = '11';
  return term;
}

export const written = (term: Terminal, data: string | Uint8Array) => new Promise<void>((resolve) => term.write(data, resolve));

/** The terminal's answer to a report request (its onData), through the public protocol. */
async function ask(term: Terminal, request: string): Promise<string> {
  let answer = '';
  const listening = term.onData((data) => (answer += data));
  await written(term, request);
  listening.dispose();
  return answer;
}

function colour(isDefault: boolean, rgb: boolean, value: number): string {
  return isDefault ? 'default' : `${rgb ? 'rgb' : 'palette'}:${value}`;
}

function describeCell(cell: Cell): string {
  const attrs = [cell.isBold() && 'bold', cell.isDim() && 'dim', cell.isItalic() && 'italic', cell.isUnderline() && 'underline', cell.isBlink() && 'blink', cell.isInverse() && 'inverse', cell.isInvisible() && 'invisible', cell.isStrikethrough() && 'strike', cell.isOverline() && 'overline'].filter(Boolean);
  const fg = colour(cell.isFgDefault(), cell.isFgRGB(), cell.getFgColor());
  const bg = colour(cell.isBgDefault(), cell.isBgRGB(), cell.getBgColor());
  return `${cell.getChars() || ' '}:${cell.getWidth()} fg=${fg} bg=${bg}${attrs.length ? ` ${attrs.join(',')}` : ''}`;
}

/**
 * Everything a viewer sees or the next output depends on: every cell (characters, widths,
 * colours, attributes) and row wrap, the cursor, the active buffer, the modes, and, asked the
 * way a program would (DECRQM 25, DECRQSS r), the cursor's visibility and the scroll region.
 */
export async function screenState(term: Terminal) {
  const buf = term.buffer.active;
  const rows: string[][] = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buf.getLine(buf.baseY + y)!;
    const row = [line.isWrapped ? 'wrapped' : 'new line'];
    for (let x = 0; x < term.cols; x++) row.push(describeCell(line.getCell(x)!));
    rows.push(row);
  }
  return {
    rows,
    cursor: [buf.cursorX, buf.cursorY],
    buffer: buf.type,
    modes: { ...term.modes },
    cursorShown: await ask(term, '\x1b[?25$p'),
    scrollRegion: await ask(term, '\x1bP$qr\x1b\\'),
  };
}
