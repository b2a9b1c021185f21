// How the router measures its consumers of PTY output, which run behind the router's thread: the
// screen emulators (they parse asynchronously, and @xterm/headless throws data away past 50 MB)
// and the store's log writer (it commits from a worker thread). A router slower than its PTYs
// would queue in them without bound, so each consumer has a watermark, and a gate is held while
// any of them is past its high mark and let go once all are back under their low marks: per
// session it withholds the session's credit (session-flow.ts, the credit loop), and for all
// sessions it is the router-wide backstop (the hub stops reading the host link). Nothing is dropped.
import type { Screen } from '../ports/screen.ts';
import type { Backlog } from './log-ledger.ts';

/** Bytes handed to one consumer and not done yet, with hysteresis between `high` and `low`. */
export class Watermark {
  private pending = 0;
  private behind = false;

  constructor(
    private readonly high: number,
    private readonly low: number,
    private readonly onChange: (behind: boolean) => void,
  ) {}

  add(bytes: number): void {
    this.pending += bytes;
    if (!this.behind && this.pending > this.high) {
      this.behind = true;
      this.onChange(true);
    }
  }

  done(bytes: number): void {
    this.pending -= bytes;
    if (this.behind && this.pending <= this.low) {
      this.behind = false;
      this.onChange(false);
    }
  }
}

/** Paused while any named consumer holds it. */
export class FlowGate {
  private readonly holders = new Set<string>();

  constructor(private readonly setPaused: (paused: boolean) => void) {}

  hold(holder: string, held: boolean): void {
    const before = this.holders.size > 0;
    if (held) this.holders.add(holder);
    else this.holders.delete(holder);
    const after = this.holders.size > 0;
    if (before !== after) this.setPaused(after);
  }
}

/**
 * The screen `make` builds (handed the parse callback), with each write counted in until its
 * emulator reports the bytes parsed; a disposed screen's unparsed bytes are counted out, since
 * its emulator will not report them.
 */
export function accountedScreen(make: (onParsed: (bytes: number) => void) => Screen, backlog: Backlog): Screen {
  let pending = 0;
  let disposed = false;
  const screen = make((bytes) => {
    if (disposed) return;
    pending -= bytes;
    backlog.done(bytes);
  });
  return {
    write(data, sequence) {
      if (!disposed) {
        pending += data.byteLength;
        backlog.add(data.byteLength);
      }
      screen.write(data, sequence);
    },
    resize: (cols, rows, sequence) => screen.resize(cols, rows, sequence),
    snapshot: () => screen.snapshot(),
    snapshotNow: () => screen.snapshotNow(),
    backlog: () => screen.backlog(),
    dispose: () => {
      screen.dispose();
      if (disposed) return;
      disposed = true;
      if (pending > 0) backlog.done(pending);
      pending = 0;
    },
  };
}
