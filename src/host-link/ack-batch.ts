// What the router returns to the PTY host, gathered per event-loop turn (docs/protocol.md §9.3):
// durability acks (`ack`, cumulative: the highest journaled event per session) and the credit
// loop's credit (`credit`, the bytes taken per session, summed). Under a flood the hub returns both
// hundreds of times a second; each alone would be a socket write and a wake-up of the host, so
// all of a turn's go out in one write. Two separate messages: one never implies the other.
import { concatBytes } from '../core/bytes.ts';
import { nextTurn } from '../core/next-turn.ts';
import { encodeFrame } from '../../pty/wire/protocol.ts';

export class AckBatch {
  readonly #acks = new Map<string, number>();
  readonly #credit = new Map<string, number>();
  #scheduled = false;

  /** `write`: the frames to send, in one piece. */
  constructor(private readonly write: (bytes: Uint8Array) => void) {}

  /** Durability: the session's events up to `n` are journaled. */
  add(sessionId: string, n: number): void {
    if (n <= (this.#acks.get(sessionId) ?? 0)) return;
    this.#acks.set(sessionId, n);
    this.#schedule();
  }

  /** The credit loop: `bytes` more of the session's output are taken. */
  credit(sessionId: string, bytes: number): void {
    if (bytes <= 0) return;
    this.#credit.set(sessionId, (this.#credit.get(sessionId) ?? 0) + bytes);
    this.#schedule();
  }

  /** Sends what is gathered now (also before the connection closes). */
  flush(): void {
    this.#scheduled = false;
    if (this.#acks.size === 0 && this.#credit.size === 0) return;
    const frames = [
      ...[...this.#acks].map(([sessionId, n]) => encodeFrame({ t: 'ack', sessionId, n })),
      ...[...this.#credit].map(([sessionId, bytes]) => encodeFrame({ t: 'credit', sessionId, bytes })),
    ];
    this.#acks.clear();
    this.#credit.clear();
    this.write(frames.length === 1 ? frames[0]! : concatBytes(frames));
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    nextTurn(() => this.flush());
  }
}
