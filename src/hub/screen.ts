// A server-side terminal emulator that folds every Output byte in, to cut vt100-screen-state-v1 snapshots.
// This one runs in the calling thread; the Node adapter runs the same class in a worker thread.
import xterm from '@xterm/headless';
import serialize from '@xterm/addon-serialize';
import unicode11 from '@xterm/addon-unicode11';
import type { Screen, ScreenFactory, ScreenSnapshot } from '../ports.ts';
import { SnapshotTail } from './screen-tail.ts';

type Terminal = InstanceType<typeof xterm.Terminal>;

export class ScreenModel implements Screen {
  private readonly term: Terminal;
  private readonly ser: InstanceType<typeof serialize.SerializeAddon>;
  private readonly tail: SnapshotTail;
  private anchor = 0;
  /** Anchor of the last chunk the parser finished. */
  private parsedAnchor = 0;
  private pending = 0;

  /** `onParsed` hears how many bytes were folded in each time the parser finishes a chunk. */
  constructor(
    cols: number,
    rows: number,
    private readonly onParsed?: (bytes: number) => void,
  ) {
    this.term = new xterm.Terminal({ cols, rows, scrollback: 0, allowProposedApi: true });
    this.ser = new serialize.SerializeAddon();
    this.term.loadAddon(this.ser as unknown as Parameters<Terminal['loadAddon']>[0]);
    // The page's terminal measures characters by Unicode 11 too (src/web/terminal-view.ts): with
    // xterm's default (Unicode 6) an emoji is one cell here and two there, and a Keyframe would put
    // everything after it one column off (docs/protocol.md §6.3).
    this.term.loadAddon(new unicode11.Unicode11Addon() as unknown as Parameters<Terminal['loadAddon']>[0]);
    this.term.unicode.activeVersion = '11';
    this.tail = new SnapshotTail(this.term);
  }

  write(data: Uint8Array, sequence: number): void {
    this.pending += data.byteLength;
    this.term.write(data, () => {
      this.pending -= data.byteLength;
      this.parsedAnchor = sequence;
      this.onParsed?.(data.byteLength);
    });
    this.anchor = sequence;
  }

  resize(cols: number, rows: number, sequence: number): void {
    // In the write queue, so bytes printed before the resize are parsed at the old size.
    this.term.write('', () => {
      this.term.resize(cols, rows);
      this.tail.resized();
      this.parsedAnchor = sequence;
    });
    this.anchor = sequence;
  }

  /**
   * Resolves once every byte written so far is parsed, with a snapshot of exactly that state:
   * xterm runs a write callback right after its chunk, before any chunk written later.
   */
  snapshot(): Promise<ScreenSnapshot> {
    const anchor = this.anchor;
    return new Promise((resolve) => {
      this.term.write('', () => {
        resolve(this.cut(anchor));
      });
    });
  }

  /**
   * xterm parses in time slices and only yields between chunks, so outside its callbacks the
   * terminal is always at a chunk boundary: the one whose anchor `parsedAnchor` holds.
   */
  snapshotNow(): Promise<ScreenSnapshot> {
    return Promise.resolve(this.cut(this.parsedAnchor));
  }

  /** The serializer's output, then what it leaves out (docs/protocol.md §6.3). */
  private cut(anchor: number): ScreenSnapshot {
    return { snapshot: this.ser.serialize() + this.tail.tail(), cols: this.term.cols, rows: this.term.rows, anchor };
  }

  backlog(): number {
    return this.pending;
  }

  dispose(): void {
    // Pending writes and snapshots finish first: dispose only after them.
    this.term.write('', () => this.term.dispose());
  }
}

export const inProcessScreens: ScreenFactory = (cols, rows, onParsed) => new ScreenModel(cols, rows, onParsed);
