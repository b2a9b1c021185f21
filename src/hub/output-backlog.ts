// Router-side flow control: PTY output handed to the screen emulators and not parsed yet. The
// emulator parses asynchronously, so a router slower than its PTYs would queue without bound
// (and @xterm/headless throws data away past 50 MB). Past `high` bytes the hub stops reading
// PTY events, so the host pauses its PTYs; at `low` it reads again. Nothing is dropped.
import type { Screen } from '../ports.ts';

export class OutputBacklog {
  private pending = 0;
  private paused = false;

  constructor(
    private readonly high: number,
    private readonly low: number,
    private readonly setPaused: (paused: boolean) => void,
  ) {}

  add(bytes: number): void {
    this.pending += bytes;
    if (!this.paused && this.pending > this.high) {
      this.paused = true;
      this.setPaused(true);
    }
  }

  done(bytes: number): void {
    this.pending -= bytes;
    if (this.paused && this.pending <= this.low) {
      this.paused = false;
      this.setPaused(false);
    }
  }
}

/** The screen, with each write counted in until its emulator reports the bytes parsed. */
export function accountedScreen(screen: Screen, backlog: OutputBacklog): Screen {
  return {
    write(data, sequence) {
      backlog.add(data.byteLength);
      screen.write(data, sequence);
    },
    resize: (cols, rows, sequence) => screen.resize(cols, rows, sequence),
    snapshot: () => screen.snapshot(),
    snapshotNow: () => screen.snapshotNow(),
    backlog: () => screen.backlog(),
    dispose: () => screen.dispose(),
  };
}
