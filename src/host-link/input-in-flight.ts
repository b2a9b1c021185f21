// A session's input on the router's side of the host socket, bounded (docs/protocol.md §7.4). The
// host bounds what a session's program has not read (pty/pty-input.ts), but the one socket every
// session's input shares would take whatever the router wrote: a controller flooding a program
// that never reads would queue gigabytes in the router, and every other session's keystrokes
// would wait behind them (an echo of 5 ms became 31 s). So each session may have at most
// INPUT_IN_FLIGHT_BYTES (src/core/flow-budget.ts) written to the socket and not yet handed to the OS;
// past that its input is refused (PTY_WRITE_FAILED to its sender), and another session's waits
// behind no more than that. The input direction's bound: output has the credit loop.
import { INPUT_IN_FLIGHT_BYTES } from '../core/flow-budget.ts';

export class InputInFlight {
  readonly #bytes = new Map<string, number>();

  constructor(private readonly limit = INPUT_IN_FLIGHT_BYTES) {}

  /** Why `bytes` more of this session's input may not be written now, or undefined when they may. A write when nothing waits always may. */
  refusal(sessionId: string, bytes: number): string | undefined {
    const waiting = this.#bytes.get(sessionId) ?? 0;
    if (waiting === 0 || waiting + bytes <= this.limit) return undefined;
    return `input not written: the PTY host has not taken ${Math.ceil(waiting / 1024)} KiB of this session's earlier input yet (at most ${this.limit / (1024 * 1024)} MiB may wait)`;
  }

  /** `bytes` of the session's input are being written: call the returned function once they are handed to the OS (or dropped). */
  sending(sessionId: string, bytes: number): () => void {
    this.#bytes.set(sessionId, (this.#bytes.get(sessionId) ?? 0) + bytes);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.#bytes.get(sessionId) ?? 0) - bytes;
      if (left > 0) this.#bytes.set(sessionId, left);
      else this.#bytes.delete(sessionId);
    };
  }
}
