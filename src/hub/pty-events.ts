// One session's PTY events in arrival order. Output that arrives within one event-loop turn becomes
// one frame (up to maxFrameBytes), which keeps frames, log rows and sends few when output is heavy
// without delaying a lone keystroke's echo. While a Keyframe is being cut the queue is held, so no
// Output is logged between the cut and the Keyframe. Each event may carry its number in the PTY
// host (`n`): once an event is handled (its frame journaled), `handled` hears the highest such
// number, so the host can forget it (docs/protocol.md §3.4); and `taken` hears how many output
// bytes left the queue, the credit loop's credit (docs/architecture.md, "The credit loop"), so
// output held here (while a Keyframe is cut) is not taken. A turn handles at most TURN_BUDGET_BYTES
// (src/core/flow-budget.ts) of one session's
// Output before it yields (docs/architecture.md, "Router flow control"): every session's queue is
// its own setImmediate, so a flooding session's backlog is handled a slice per turn, round-robin
// with the others and with the sockets' reads in between, not all at once ahead of them.

import { TURN_BUDGET_BYTES } from '../core/flow-budget.ts';
import { nextTurn } from '../core/next-turn.ts';
import { GatheredOutput, type OutputBytes } from './gathered-output.ts';

type QueuedEvent = { output: GatheredOutput; n: number | undefined } | { run: () => void; n: number | undefined };

export class PtyEventQueue {
  private readonly events: QueuedEvent[] = [];
  private held = false;
  private scheduled = false;

  constructor(
    private readonly emitOutput: (output: OutputBytes, n: number | undefined) => void,
    private readonly maxFrameBytes: number,
    private readonly handled: (n: number) => void = () => undefined,
    private readonly taken: (bytes: number) => void = () => undefined,
  ) {}

  /** `data` is copied (the host connection reads into its memory again, PtyHostListener.onData). */
  output(data: Uint8Array, n?: number): void {
    const last = this.events.at(-1);
    if (last && 'output' in last && last.output.size + data.byteLength <= this.maxFrameBytes) {
      last.output.add(data);
      last.n = n ?? last.n;
    } else {
      this.events.push({ output: new GatheredOutput(data), n });
    }
    this.schedule();
  }

  /** Any other PTY-ordered event (a Resize, the exit): runs after the Output queued before it. */
  event(run: () => void, n?: number): void {
    this.events.push({ run, n });
    this.schedule();
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.drain();
  }

  /** Runs everything queued now (e.g. before the session's end is recorded); `budget`: stop once this much Output is handled, and go on next turn. */
  drain(budget = Infinity): void {
    let n: number | undefined;
    let spent = 0;
    while (!this.held && this.events.length > 0 && spent < budget) {
      const e = this.events.shift()!;
      if ('run' in e) e.run();
      else {
        spent += e.output.size;
        this.emitOutput(e.output.take(), e.n);
      }
      n = e.n ?? n;
    }
    if (n !== undefined) this.handled(n);
    if (spent > 0) this.taken(spent);
    if (this.events.length > 0) this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.held) return;
    this.scheduled = true;
    nextTurn(() => {
      this.scheduled = false;
      this.drain(TURN_BUDGET_BYTES);
    });
  }
}
