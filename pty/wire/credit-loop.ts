// The credit loop (docs/architecture.md, "The credit loop"; docs/protocol.md §9.3): for each
// session, the output bytes sent over the host link that the router has not yet taken. Past the
// high mark that session's PTY is paused (its program blocks on its writes); under the low mark it
// reads again. The router gives credit back (`credit {sessionId, bytes}`) as it takes a session's
// output, and withholds it while that session's consumers are behind, so one slow or flooding
// session pauses only itself. It says nothing about durability: that is `ack` (journaled).
//
// The same loop runs wherever the link's far end can pause a PTY: in the host, one per router
// connection that returns credit; in the router, for a host too old to run it (the router then
// stops reading the whole link instead). Portable: no runtime API.

import { CREDIT_HIGH_BYTES, CREDIT_LOW_BYTES } from '../../src/core/flow-budget.ts';

export class CreditLoop {
  /** Per session: bytes sent and not taken yet (absent: none). */
  readonly #untaken = new Map<string, number>();
  /** Sessions past the high mark and not yet back under the low one. */
  readonly #paused = new Set<string>();

  constructor(
    private readonly high = CREDIT_HIGH_BYTES,
    private readonly low = CREDIT_LOW_BYTES,
  ) {}

  /** `bytes` of the session's output went over the link; true when that paused it. */
  sent(sessionId: string, bytes: number): boolean {
    const untaken = (this.#untaken.get(sessionId) ?? 0) + bytes;
    this.#untaken.set(sessionId, untaken);
    if (untaken <= this.high || this.#paused.has(sessionId)) return false;
    this.#paused.add(sessionId);
    return true;
  }

  /**
   * The router took `bytes` of the session's output; true when that resumed it. Credit for more
   * than is untaken (bytes sent to a connection before this one) counts as all of it.
   */
  taken(sessionId: string, bytes: number): boolean {
    const untaken = Math.max(0, (this.#untaken.get(sessionId) ?? 0) - bytes);
    if (untaken === 0) this.#untaken.delete(sessionId);
    else this.#untaken.set(sessionId, untaken);
    if (untaken > this.low || !this.#paused.has(sessionId)) return false;
    this.#paused.delete(sessionId);
    return true;
  }

  paused(sessionId: string): boolean {
    return this.#paused.has(sessionId);
  }

  get anyPaused(): boolean {
    return this.#paused.size > 0;
  }

  untaken(sessionId: string): number {
    return this.#untaken.get(sessionId) ?? 0;
  }

  /** The session ended: it holds no credit. True when it was paused. */
  forget(sessionId: string): boolean {
    this.#untaken.delete(sessionId);
    return this.#paused.delete(sessionId);
  }
}
