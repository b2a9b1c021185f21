// Acknowledgements to the PTY host, gathered per event-loop turn (docs/protocol.md §9.3). The hub
// acknowledges each session's events as soon as it has handled a slice of them, which under a
// flood is hundreds of times a second; each on its own would be a socket write and a wake-up of
// the host process. Acks are cumulative per session, so one per session per turn says the same,
// and all of a turn's go out in one write.
import { concatBytes } from '../src/bytes.ts';
import { nextTurn } from '../src/next-turn.ts';
import { encodeFrame } from './protocol.ts';

export class AckBatch {
  readonly #pending = new Map<string, number>();
  #scheduled = false;

  /** `write`: the frames to send, in one piece. */
  constructor(private readonly write: (bytes: Uint8Array) => void) {}

  add(sessionId: string, n: number): void {
    if (n <= (this.#pending.get(sessionId) ?? 0)) return;
    this.#pending.set(sessionId, n);
    if (this.#scheduled) return;
    this.#scheduled = true;
    nextTurn(() => this.flush());
  }

  /** Sends what is gathered now (also before the connection closes). */
  flush(): void {
    this.#scheduled = false;
    if (this.#pending.size === 0) return;
    const frames = [...this.#pending].map(([sessionId, n]) => encodeFrame({ t: 'ack', sessionId, n }));
    this.#pending.clear();
    this.write(frames.length === 1 ? frames[0]! : concatBytes(frames));
  }
}
