// What a client needs to keep its screen exact across reconnects (docs/protocol.md §3.2, §6): the highest
// log-frame sequence seen (the next `replay_from`), the Output already folded into a Keyframe, and
// whether the screen must be repainted from the next Keyframe because content was lost.

export class ReplayCursor {
  private cursor = 0;
  /** Output at or below this sequence is in a Keyframe the consumer has: never applied again. */
  private floor = 0;
  private repaint = true;

  /** The highest log-frame sequence seen: `replay_from` for the next join. */
  get position(): number {
    return this.cursor;
  }

  /** True while the consumer's screen is not known to be right: the next Keyframe must repaint it. */
  get needsRepaint(): boolean {
    return this.repaint;
  }

  /** `replay_from` for a (re)join: none before anything was seen (a fresh join repaints from its Keyframe). */
  replayFrom(): number | undefined {
    return this.cursor > 0 ? this.cursor : undefined;
  }

  /**
   * A log frame (Output, Resize, MembershipChanged, Closed, a task update). True when it is new and
   * should be applied; false for a duplicate or for Output a Keyframe already painted.
   */
  logFrame(sequence: number, isOutput: boolean): boolean {
    if (sequence <= this.cursor) return false;
    this.cursor = sequence;
    return !(isOutput && sequence <= this.floor);
  }

  /**
   * A Keyframe (a periodic log frame, or one sent to this connection at join, on request or after a
   * lag). True when the consumer must repaint from it; either way Output up to its anchor is done.
   */
  keyframe(sequence: number, anchor: number): boolean {
    this.cursor = Math.max(this.cursor, sequence);
    this.floor = Math.max(this.floor, anchor);
    const repaint = this.repaint;
    this.repaint = false;
    return repaint;
  }

  /** Content was lost (PTY_OUTPUT_LAGGED, or the consumer asked for a fresh screen): repaint from the next Keyframe. */
  lost(): void {
    this.repaint = true;
  }

  /**
   * REPLAY_OUT_OF_RANGE: the old screen is lost. When the server's counter is behind this cursor
   * (its log was reset), numbering starts over so its frames are not taken for duplicates.
   */
  outOfRange(currentSequence: number | undefined): void {
    this.repaint = true;
    if (currentSequence !== undefined && currentSequence < this.cursor) {
      this.cursor = 0;
      this.floor = 0;
    }
  }
}
