// One session's PTY events in arrival order. Output that arrives within one event-loop turn becomes
// one frame (up to maxFrameBytes), which keeps frames, log rows and sends few when output is heavy
// without delaying a lone keystroke's echo. While a Keyframe is being cut the queue is held, so no
// Output is logged between the cut and the Keyframe.

type QueuedEvent = { chunks: Uint8Array[]; size: number } | (() => void);

const nextTurn: (f: () => void) => void = (globalThis as { setImmediate?: (f: () => void) => void }).setImmediate ?? ((f) => setTimeout(f, 0));

export class PtyEventQueue {
  private readonly events: QueuedEvent[] = [];
  private held = false;
  private scheduled = false;

  constructor(
    private readonly emitOutput: (data: Uint8Array) => void,
    private readonly maxFrameBytes: number,
  ) {}

  output(data: Uint8Array): void {
    const last = this.events.at(-1);
    if (last && typeof last !== 'function' && last.size + data.byteLength <= this.maxFrameBytes) {
      last.chunks.push(data);
      last.size += data.byteLength;
    } else {
      this.events.push({ chunks: [data], size: data.byteLength });
    }
    this.schedule();
  }

  /** Any other PTY-ordered event (a Resize, the exit): runs after the Output queued before it. */
  event(run: () => void): void {
    this.events.push(run);
    this.schedule();
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.drain();
  }

  /** Runs everything queued now (e.g. before the session's end is recorded). */
  drain(): void {
    while (!this.held && this.events.length > 0) {
      const e = this.events.shift()!;
      if (typeof e === 'function') e();
      else this.emitOutput(e.chunks.length === 1 ? e.chunks[0]! : concat(e.chunks, e.size));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.held) return;
    this.scheduled = true;
    nextTurn(() => {
      this.scheduled = false;
      this.drain();
    });
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
