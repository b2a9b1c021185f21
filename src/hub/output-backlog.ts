// Router-side flow control: PTY output handed to the screen emulators and not parsed yet. The
// emulator parses asynchronously, so a router slower than its PTYs would queue without bound
// (and @xterm/headless throws data away past 50 MB). Past `high` bytes the hub stops reading
// PTY events, so the host pauses its PTYs; at `low` it reads again. Nothing is dropped.

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
