// Per-session output credit (docs/protocol.md §9.3): a router that asked for a window (`events
// {window}`) acknowledges each event once it has handled it, so the host lets each session have at
// most that many output bytes sent and not yet acknowledged; past it, that session's PTY pauses
// until acknowledgements bring it back under half. The socket to the router is one ordered stream,
// so without a bound a flooding session queues megabytes ahead of every other session's next
// keystroke echo; with it, another session's output waits behind at most one window.

export class OutputCredit {
  /** Per session: its unacknowledged output events in order, and their bytes in all. */
  readonly #inflight = new Map<string, { bytes: number; events: Array<{ n: number; bytes: number }> }>();
  /** Sessions past their window: their PTY is paused. */
  readonly #exhausted = new Set<string>();
  #window: number | undefined;

  /** The window in force, or undefined: no bound (a receiver that does not acknowledge promptly). */
  get window(): number | undefined {
    return this.#window;
  }

  /** Sets the window (undefined: none); true when some session's verdict changed. */
  setWindow(window: number | undefined): boolean {
    this.#window = window;
    let changed = false;
    for (const [sessionId, w] of this.#inflight) changed = this.#judge(sessionId, w.bytes) || changed;
    return changed;
  }

  /** Output event `n` of `bytes` went out (or is held for the next receiver); true when the session just ran out of credit. */
  sent(sessionId: string, n: number, bytes: number): boolean {
    let w = this.#inflight.get(sessionId);
    if (!w) this.#inflight.set(sessionId, (w = { bytes: 0, events: [] }));
    w.bytes += bytes;
    w.events.push({ n, bytes });
    return this.#judge(sessionId, w.bytes);
  }

  /** The session's events up to `n` are acknowledged; true when the session got its credit back. */
  acked(sessionId: string, n: number): boolean {
    const w = this.#inflight.get(sessionId);
    if (!w) return false;
    let k = 0;
    while (k < w.events.length && w.events[k]!.n <= n) w.bytes -= w.events[k++]!.bytes;
    w.events.splice(0, k);
    if (w.events.length === 0) this.#inflight.delete(sessionId);
    return this.#judge(sessionId, w.bytes);
  }

  exhausted(sessionId: string): boolean {
    return this.#exhausted.has(sessionId);
  }

  get anyExhausted(): boolean {
    return this.#exhausted.size > 0;
  }

  /** The session ended: it reads nothing more, so it holds no credit. */
  forget(sessionId: string): void {
    this.#inflight.delete(sessionId);
    this.#exhausted.delete(sessionId);
  }

  /** Pauses past the window, resumes at half of it (hysteresis, so a PTY is not toggled per event); true on a change. */
  #judge(sessionId: string, bytes: number): boolean {
    const window = this.#window;
    if (this.#exhausted.has(sessionId)) {
      if (window !== undefined && bytes > window / 2) return false;
      this.#exhausted.delete(sessionId);
      return true;
    }
    if (window === undefined || bytes <= window) return false;
    this.#exhausted.add(sessionId);
    return true;
  }
}
