// A server-side terminal emulator that folds every Output byte in, to cut vt100-screen-state-v1 snapshots.
// This one runs in the calling thread; the Node adapter runs the same class in a worker thread.
// Plain text is held back and its part that scrolled off unseen dropped unparsed (plain-run.ts;
// docs/architecture.md, "The screen model").
import xterm from '@xterm/headless';
import serialize from '@xterm/addon-serialize';
import unicode11 from '@xterm/addon-unicode11';
import type { Screen, ScreenFactory, ScreenSnapshot } from '../ports/screen.ts';
import { PlainRun, plainPrefix } from './plain-run.ts';
import { ScreenFault } from './screen-fault.ts';
import { SnapshotTail } from './screen-tail.ts';
import { terminalInternals, type TerminalInternals } from './xterm-internals.ts';

type Terminal = InstanceType<typeof xterm.Terminal>;

export interface ScreenModelOptions {
  /** Hold plain text back and drop what scrolls off unseen (default); false parses every byte. */
  holdPlain?: boolean;
  /**
   * Hears the first exception thrown inside xterm (a bug of the emulator a byte stream or resize
   * can reach). The screen is broken from then on: its snapshots fail, writes are ignored; its
   * owner rebuilds one from the log (src/screen/session-screen.ts).
   */
  onFailed?: (error: Error) => void;
}

export class ScreenModel implements Screen {
  private readonly term: Terminal;
  private readonly ser: InstanceType<typeof serialize.SerializeAddon>;
  private readonly tail: SnapshotTail;
  private readonly xterm: TerminalInternals;
  private readonly holdPlain: boolean;
  private readonly plain = new PlainRun();
  /**
   * The plain run held back: `open` once it is known to start where a run may (only while xterm's
   * queue is empty: it is trimmed as it grows, and parsed synchronously when needed); `undecided`
   * while frames before it are still in xterm's queue (decided when that empties).
   */
  private run: 'none' | 'undecided' | 'open' = 'none';
  /** Sequence of the last frame in the run. */
  private runAnchor = 0;
  /** Sequence of the last frame written. */
  private anchor = 0;
  /** Sequence of the last frame xterm's queue finished (what the terminal shows while it is busy). */
  private parsedAnchor = 0;
  /** Writes in xterm's own queue not called back yet, and their bytes. */
  private queued = 0;
  private pending = 0;
  private readonly fault: ScreenFault;

  /** `onParsed` hears how many bytes were folded in each time the parser finishes a chunk. */
  constructor(
    cols: number,
    rows: number,
    private readonly onParsed?: (bytes: number) => void,
    options: ScreenModelOptions = {},
  ) {
    // One line of scrollback, never serialized: with none, xterm 6.0.0 loses a row when a resize
    // reflows wrapped lines and then grows the screen, and the next line feed throws (in the
    // worker, an uncaught error that took every session's Keyframes with it).
    // Errors only: the synchronous write would warn once that it is deprecated.
    this.term = new xterm.Terminal({ cols, rows, scrollback: 1, allowProposedApi: true, logLevel: 'error' });
    this.ser = new serialize.SerializeAddon();
    this.term.loadAddon(this.ser as unknown as Parameters<Terminal['loadAddon']>[0]);
    // The page's terminal measures characters by Unicode 11 too (src/web/terminal-view.ts): with
    // xterm's default (Unicode 6) an emoji is one cell here and two there, and a Keyframe would put
    // everything after it one column off (docs/protocol.md §6.3).
    this.term.loadAddon(new unicode11.Unicode11Addon() as unknown as Parameters<Terminal['loadAddon']>[0]);
    this.term.unicode.activeVersion = '11';
    this.tail = new SnapshotTail(this.term);
    this.fault = new ScreenFault((error) => {
      this.plain.end();
      this.run = 'none';
      try {
        this.term.dispose();
      } catch {
        // Broken already: nothing is left to free that the collector will not.
      }
      options.onFailed?.(error);
    });
    this.xterm = terminalInternals(this.term, (e) => this.fault.fail(e));
    this.holdPlain = options.holdPlain ?? true;
  }

  write(data: Uint8Array, sequence: number): void {
    if (this.fault.error) return this.onParsed?.(data.byteLength);
    this.fault.guard(() => this.fold(data, sequence));
  }

  private fold(data: Uint8Array, sequence: number): void {
    const previous = this.anchor;
    this.anchor = sequence;
    if (this.holdPlain && plainPrefix(data) === data.byteLength && this.hold(data)) {
      this.runAnchor = sequence;
      this.onParsed?.(data.byteLength);
      return;
    }
    // An open run holds whole frames: parsed, the terminal is at the frame before this one.
    if (this.queued === 0) this.parsedAnchor = previous;
    this.endRun();
    this.enqueue(data, () => {
      this.parsedAnchor = sequence;
      this.onParsed?.(data.byteLength);
    });
  }

  /** Whether a frame of plain text joined the run. */
  private hold(data: Uint8Array): boolean {
    if (this.run === 'none') this.run = this.queued > 0 ? 'undecided' : this.openRun() ? 'open' : 'none';
    const cap = this.holdCap();
    if (this.run === 'open') {
      this.plain.append(data, cap, (held) => this.xterm.writeNow(held));
      return true;
    }
    if (this.run === 'none') return false;
    // Whole frames only, as xterm's chunks: between them the terminal must be at a frame boundary.
    if (this.plain.size + data.byteLength > cap) this.enqueueRun();
    if (data.byteLength > cap) return false;
    this.plain.append(data, cap);
    return true;
  }

  resize(cols: number, rows: number, sequence: number): void {
    if (!this.fault.error) this.fault.guard(() => this.fit(cols, rows, sequence));
  }

  private fit(cols: number, rows: number, sequence: number): void {
    this.anchor = sequence;
    const apply = () => {
      this.term.resize(cols, rows);
      this.tail.resized();
      this.parsedAnchor = sequence;
    };
    this.endRun();
    // In the write queue, so bytes printed before the resize are parsed at the old size.
    if (this.queued > 0) this.enqueue(new Uint8Array(0), apply);
    else apply();
  }

  /**
   * The state after every byte written so far: at once when xterm's queue is empty, else from its
   * callback after the last write (xterm runs it right after that chunk, before any written later).
   */
  snapshot(): Promise<ScreenSnapshot> {
    const anchor = this.anchor;
    if (this.fault.error || this.queued === 0) return this.fault.now(() => this.cutAll());
    return new Promise((resolve, reject) => {
      const done = this.fault.wait(reject);
      this.fault.guard(() => {
        this.endRun();
        this.enqueue(new Uint8Array(0), () => {
          // Cut first: should it throw, this snapshot fails with the terminal.
          const snap = this.cut(anchor);
          done();
          resolve(snap);
        });
      });
    });
  }

  /**
   * xterm parses in time slices and only yields between chunks, so outside its callbacks the
   * terminal is always at a chunk boundary: the one whose anchor `parsedAnchor` holds (a run held
   * after it is not in the cut). With the queue empty the run is parsed now: it costs little.
   */
  snapshotNow(): Promise<ScreenSnapshot> {
    return this.fault.now(() => (this.queued === 0 ? this.cutAll() : this.cut(this.parsedAnchor)));
  }

  backlog(): number {
    return this.pending;
  }

  dispose(): void {
    // A run held back is dropped: no decision is taken for it on a terminal about to go.
    this.plain.end();
    this.run = 'none';
    if (this.fault.error) return;
    // Pending writes and snapshots finish first: dispose only after them.
    if (this.queued > 0) this.enqueue(new Uint8Array(0), () => this.term.dispose());
    else this.fault.guard(() => this.term.dispose());
  }

  /** Bytes dropped unparsed so far (they scrolled off before anything could show them). */
  get plainDropped(): number {
    return this.plain.dropped;
  }

  private cutAll(): ScreenSnapshot {
    this.flushPlain();
    return this.cut(this.anchor);
  }

  /** The serializer's output, then what it leaves out (docs/protocol.md §6.3). */
  private cut(anchor: number): ScreenSnapshot {
    return { snapshot: this.ser.serialize({ scrollback: 0 }) + this.tail.tail(), cols: this.term.cols, rows: this.term.rows, anchor };
  }

  /** Parses an open run now: only with xterm's queue empty, and never from inside its callbacks. */
  private flushPlain(): void {
    if (!this.plain.empty) this.xterm.writeNow(this.plain.take());
  }

  /**
   * The run ends: an open one is parsed now (xterm's queue is empty), an undecided one goes to the
   * queue after what is there (safe inside xterm's callbacks).
   */
  private endRun(): void {
    if (this.run === 'open') this.flushPlain();
    else this.enqueueRun();
    this.plain.end();
    this.run = 'none';
  }

  /** An undecided run goes to xterm's queue after what is there. */
  private enqueueRun(): void {
    if (this.plain.empty) return;
    const bytes = this.plain.take();
    const anchor = this.runAnchor;
    this.enqueue(bytes, () => {
      this.parsedAnchor = anchor;
    });
  }

  private enqueue(data: Uint8Array, done: () => void): void {
    this.queued++;
    this.pending += data.byteLength;
    this.term.write(data, () => {
      this.queued--;
      this.pending -= data.byteLength;
      done();
      if (this.queued === 0 && this.run === 'undecided') this.decide();
    });
  }

  /**
   * xterm has parsed everything before the undecided run: it is open if it starts where a run may;
   * else it is parsed after all (queued: this is one of xterm's callbacks).
   */
  private decide(): void {
    if (this.openRun()) this.run = 'open';
    else this.endRun();
  }

  /** Whether a run may start here; if so, the run (empty, or undecided until now) opens at this state. */
  private openRun(): boolean {
    if (!this.xterm.plainMayStart()) return false;
    this.plain.open({
      cols: this.term.cols,
      rows: this.term.rows,
      x: this.term.buffer.active.cursorX,
      wraparound: this.term.modes.wraparoundMode,
      lineFeedReturns: this.term.options.convertEol ?? false,
      ascii: this.xterm.asciiCharset(),
    });
    return true;
  }

  /** Room for the 2 × rows lines a run must keep, several times over. */
  private holdCap(): number {
    return Math.max(64 * 1024, Math.min(1024 * 1024, 4 * this.term.rows * (this.term.cols + 2)));
  }
}

export const inProcessScreens: ScreenFactory = (cols, rows, onParsed, onFailed) => new ScreenModel(cols, rows, onParsed, { onFailed });
