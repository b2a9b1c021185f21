// A terminal emulator per session (src/screen/).
export interface ScreenSnapshot {
  /** vt100-screen-state-v1: the escape-sequence stream that repaints the screen. */
  snapshot: string;
  cols: number;
  rows: number;
  /** Sequence of the latest Output/Resize folded in. */
  anchor: number;
}

/** A terminal emulator fed every Output byte of one session, in order. */
export interface Screen {
  /** `data`: a logged frame's bytes, which never change afterwards: the screen may keep them. */
  write(data: Uint8Array, sequence: number): void;
  resize(cols: number, rows: number, sequence: number): void;
  /** The state after everything written so far (later writes are not in it); waits for the parser. */
  snapshot(): Promise<ScreenSnapshot>;
  /**
   * The state the parser has reached now, at a chunk boundary, without waiting for the bytes still
   * queued: its anchor may be older than the last write.
   */
  snapshotNow(): Promise<ScreenSnapshot>;
  /** Bytes written but not parsed yet: how far the emulator lags behind the output. */
  backlog(): number;
  dispose(): void;
}

/**
 * `onParsed` hears how many bytes the emulator folded in, as it catches up (for flow control);
 * `onFailed`, that the emulator broke (it threw): the screen is of no more use (src/screen/session-screen.ts).
 */
export type ScreenFactory = (cols: number, rows: number, onParsed?: (bytes: number) => void, onFailed?: (error: Error) => void) => Screen;
