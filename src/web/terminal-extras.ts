// Clickable links and search in the scrollback, on xterm.js's own API: no addon packages to add
// (@xterm/addon-web-links and addon-search would do the same).
import type { IBufferLine, IDisposable, ILink, Terminal } from '@xterm/xterm';

/** http(s) URLs as terminals print them; a trailing period, comma or bracket is the sentence's, not the URL's. */
const URL_RE = /https?:\/\/[^\s"'<>`]+/g;
const TRAILING = /[.,;:!?)\]}]+$/;

/** Cell columns of a line's characters: a wide character (CJK, emoji) takes two cells. */
function cellColumns(line: IBufferLine, cols: number): number[] {
  const at: number[] = [];
  for (let x = 0; x < cols; x++) {
    const cell = line.getCell(x);
    if (!cell || cell.getWidth() === 0) continue;
    for (let i = 0; i < Math.max(cell.getChars().length, 1); i++) at.push(x);
  }
  return at;
}

/** Ctrl/Cmd-click (or a plain click) on an http(s) URL opens it in a new tab, without `opener`. */
export function registerWebLinks(term: Terminal, open: (url: string) => void): IDisposable {
  return term.registerLinkProvider({
    provideLinks(y, callback) {
      const line = term.buffer.active.getLine(y - 1);
      if (!line) return callback(undefined);
      const text = line.translateToString(true);
      const columns = cellColumns(line, term.cols);
      const links: ILink[] = [];
      for (const m of text.matchAll(URL_RE)) {
        const url = m[0].replace(TRAILING, '');
        const start = columns[m.index] ?? m.index;
        const end = columns[m.index + url.length - 1] ?? m.index + url.length - 1;
        links.push({ range: { start: { x: start + 1, y }, end: { x: end + 1, y } }, text: url, activate: (_e, u) => open(u) });
      }
      callback(links.length > 0 ? links : undefined);
    },
  });
}

/**
 * Finds text in the scrollback and screen, case-insensitively, from the newest line up (a
 * terminal's history is read upwards); each `next()` goes one match further back, `previous()`
 * one forward. The match is selected and scrolled into view.
 */
export class TerminalSearch {
  private query = '';
  /** The last match: buffer row and column. */
  private at: { row: number; col: number } | null = null;

  constructor(private readonly term: Terminal) {}

  /** Returns a description for the page: where it was found, or that it was not. */
  find(query: string, direction: 'older' | 'newer'): string {
    if (!query) return '';
    if (query.toLowerCase() !== this.query) {
      this.query = query.toLowerCase();
      this.at = null;
    }
    const buffer = this.term.buffer.active;
    const last = buffer.length - 1;
    const step = direction === 'older' ? -1 : 1;
    let row = this.at?.row ?? (direction === 'older' ? last : 0);
    let from = this.at ? this.at.col + (direction === 'older' ? -1 : 1) : direction === 'older' ? Number.POSITIVE_INFINITY : 0;
    for (let n = 0; n <= last; n++, row += step, from = direction === 'older' ? Number.POSITIVE_INFINITY : 0) {
      if (row < 0 || row > last) break;
      const text = buffer.getLine(row)?.translateToString(true).toLowerCase() ?? '';
      const col = direction === 'older' ? text.lastIndexOf(this.query, from) : text.indexOf(this.query, from);
      if (col < 0 || (direction === 'older' && from < 0)) continue;
      this.at = { row, col };
      this.term.select(col, row, this.query.length);
      this.term.scrollToLine(Math.max(0, row - Math.floor(this.term.rows / 2)));
      return `line ${row + 1} of ${last + 1}`;
    }
    return this.at ? 'no more matches' : 'not found';
  }
}

/** The clipboard as the page may use it: written, never read (a program must not read ours). */
export interface ClipboardWriter {
  writeText(text: string): Promise<void>;
}

/**
 * Copy on select (what is selected is on the clipboard, as in xterm and ttyd) and OSC 52 (a
 * program in the session, e.g. tmux or vim over ssh, sets the clipboard): its text goes to
 * `osc52`, which decides (terminal-view.ts: never from the past, only for a controller, after
 * asking). Its query form (`?`) is never answered: a program must not read our clipboard.
 */
export function registerClipboard(term: Terminal, clipboard: ClipboardWriter | undefined, osc52: (text: string) => void): IDisposable[] {
  const onSelect = term.onSelectionChange(() => {
    const text = term.getSelection();
    if (text) writeClipboard(clipboard, text);
  });
  const handler = term.parser.registerOscHandler(52, (data) => {
    const payload = data.slice(data.indexOf(';') + 1);
    const text = payload === '?' ? null : decodeBase64Text(payload);
    if (text !== null) osc52(text);
    return true;
  });
  return [onSelect, handler];
}

export function writeClipboard(clipboard: ClipboardWriter | undefined, text: string): void {
  void clipboard?.writeText(text).catch(() => undefined);
}

function decodeBase64Text(b64: string): string | null {
  try {
    const bin = atob(b64);
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}
