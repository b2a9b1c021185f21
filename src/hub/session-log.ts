// One session's log (docs/protocol.md §3, §6): it numbers every log frame, writes it to the store,
// reads ranges back for replays, and keeps retention running in the background.
import { BindingError } from '../protocol/errors.ts';
import type { Config } from '../core/config.ts';
import type { Metrics } from '../core/metrics.ts';
import type { Clock } from '../ports/clock.ts';
import type { HopTrace } from '../ports/hop-trace.ts';
import type { LogEntry } from '../protocol/logged-frames.ts';
import type { Logger } from '../ports/logger.ts';
import type { LostRange, Store } from '../ports/store.ts';
import type { LogFrame, SessionEvent } from './types.ts';
import { encodeLogFrame } from './wire.ts';

export interface SessionLogDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  config: Pick<Config, 'replayBufferFrames' | 'replayRetentionSeconds'>;
  /** The echo path's hop trace (docs/performance.md): undefined unless it is on. */
  trace?: HopTrace;
}

/** Numbers reserved at a time, and how many may be left when the next reservation starts (docs/protocol.md §3.4). */
export const SEQUENCE_BLOCK = 4096;
const RESERVE_WHEN_LEFT = SEQUENCE_BLOCK / 2;
const RESERVE_RETRY_MS = 250;

/**
 * Frames a catch-up (a join's replay, SubscribeToTask's) reads at a time: what it holds in memory
 * is a page, however much the retained log holds (docs/protocol.md §6.2).
 */
export const REPLAY_PAGE_FRAMES = 256;

/** Log entries read a page at a time, in sequence order. */
export type LogPages = AsyncIterable<LogEntry[]>;

/** Where a session's numbering starts (docs/protocol.md §3.4). */
export interface Numbering {
  /** The highest number already taken. */
  last: number;
  /** The highest number the store lets this router hand out. */
  ceiling: number;
}

export class SessionLog {
  private sequence: number;
  /** The stored ceiling: no frame numbered above it reaches anyone. */
  private ceiling: number;
  private reserving = false;
  /** No more frames will be numbered here (the hub stopped): a failed reservation is not retried for nothing. */
  private stopped = false;
  /** Frames numbered above the ceiling, waiting for the next reservation to be stored. */
  private readonly held: Array<{ frame: LogFrame; deliver: (frame: LogFrame) => void }> = [];
  private readonly waiting: Array<{ sequence: number; resolve: () => void }> = [];
  private framesSincePrune = 0;
  /** The prune under way, if any: retention runs one at a time. */
  private pruning: Promise<void> | null = null;

  constructor(
    private readonly sessionId: string,
    private readonly deps: SessionLogDeps,
    numbering: Numbering,
  ) {
    this.sequence = numbering.last;
    this.ceiling = numbering.ceiling;
  }

  /** The latest sequence number given out. */
  get current(): number {
    return this.sequence;
  }

  /**
   * Takes the next sequence number for the event, encodes it once and queues it for the store
   * (which journals it first); `deliver` runs now, or once the ceiling covers the number.
   */
  append(event: SessionEvent, deliver: (frame: LogFrame) => void, hostEvent?: LogEntry['hostEvent']): LogFrame {
    this.deps.trace?.('router.log_in');
    const now = this.deps.clock.now();
    const sequence = ++this.sequence;
    const { frame, entry } = encodeLogFrame(this.sessionId, event, sequence, now, hostEvent);
    this.deps.trace?.('router.log_encoded');
    this.deps.store.appendLog(entry);
    this.deps.trace?.('router.log_out');
    if (++this.framesSincePrune >= this.pruneEvery) this.prune(now);
    if (sequence <= this.ceiling && this.held.length === 0) deliver(frame);
    else this.held.push({ frame, deliver });
    this.reserveAhead();
    return frame;
  }

  /** Resolves once every frame up to `sequence` may reach a client (a join's flush waits for it). */
  deliverable(sequence: number): Promise<void> {
    if (sequence <= this.ceiling) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ sequence, resolve }));
  }

  /** Stores a higher ceiling before the numbers run out, so delivery never waits in the common case. */
  reserveAhead(): void {
    if (this.reserving || this.sequence + RESERVE_WHEN_LEFT <= this.ceiling) return;
    this.reserving = true;
    const target = this.sequence + SEQUENCE_BLOCK;
    this.deps.store.reserveSequences(this.sessionId, target).then(
      () => {
        this.reserving = false;
        this.ceiling = Math.max(this.ceiling, target);
        this.release();
        this.reserveAhead();
      },
      (e: unknown) => {
        this.deps.logger.log('warn', 'could not reserve sequence numbers: frames wait', { session: this.sessionId, error: e, waiting: this.held.length });
        if (this.stopped && this.held.length === 0) {
          this.reserving = false;
          return;
        }
        setTimeout(() => {
          this.reserving = false;
          this.reserveAhead();
        }, RESERVE_RETRY_MS);
      },
    );
  }

  /** The hub is stopping: reservations are retried only for frames already waiting. */
  stop(): void {
    this.stopped = true;
  }

  private release(): void {
    let n = 0;
    while (n < this.held.length && this.held[n]!.frame.sequence <= this.ceiling) n++;
    for (const { frame, deliver } of this.held.splice(0, n)) deliver(frame);
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      if (this.waiting[i]!.sequence <= this.ceiling) this.waiting.splice(i, 1)[0]!.resolve();
    }
  }

  /**
   * Log entries in (replayFrom, upTo] for a client catching up (a join, or SubscribeToTask), or the
   * REPLAY_OUT_OF_RANGE error to send it (docs/protocol.md §6.2).
   */
  async range(replayFrom: number, upTo: number): Promise<LogPages | BindingError> {
    const oldest = await this.deps.store.oldestSequence(this.sessionId);
    const outOfRange = replayFrom > upTo || (oldest !== null && replayFrom < oldest - 1);
    this.deps.metrics.inc('replay_requests_total', { result: outOfRange ? 'out_of_range' : 'ok' });
    if (outOfRange) {
      const message = `replay_from ${replayFrom} is outside the retained log (oldest retained sequence ${oldest ?? 'none'}, current ${upTo})`;
      return new BindingError('REPLAY_OUT_OF_RANGE', message, {
        metadata: { replay_from: String(replayFrom), oldest_retained_sequence: String(oldest ?? '') },
        extra: { oldest_retained_sequence: oldest, current_sequence: upTo },
      });
    }
    return this.pages(replayFrom, upTo);
  }

  /** The entries in (after, upTo], REPLAY_PAGE_FRAMES at a time; no check of the range. */
  async *pages(after: number, upTo: number): LogPages {
    while (after < upTo) {
      const page = await this.page(after, upTo, REPLAY_PAGE_FRAMES);
      if (page.length === 0) return;
      yield page;
      after = page[page.length - 1]!.sequence;
    }
  }

  /** The runs of numbers lost for good in (after, upTo] (docs/protocol.md §6.2), in order. */
  lost(after: number, upTo: number): Promise<LostRange[]> {
    return this.deps.store.lostRanges(this.sessionId, after, upTo);
  }

  /** At most `frames` entries in (after, upTo]; no check of the range. */
  async page(after: number, upTo: number, frames: number): Promise<LogEntry[]> {
    return (await this.deps.store.readLog(this.sessionId, after, frames)).filter((e) => e.sequence <= upTo);
  }

  /** The frames after `after`, as they were sent (an ended session's last frames). */
  async framesAfter(after: number): Promise<LogFrame[]> {
    return (await this.deps.store.readLog(this.sessionId, after)).map(asFrame);
  }

  /** Retention runs in the background, a few times per `replay_buffer_frames` frames logged. */
  private get pruneEvery(): number {
    return Math.max(16, Math.floor(this.deps.config.replayBufferFrames / 4));
  }

  private prune(now: number): void {
    if (this.pruning) return;
    this.framesSincePrune = 0;
    const { replayBufferFrames: keepFrames, replayRetentionSeconds: keepSeconds } = this.deps.config;
    this.pruning = this.deps.store
      .prune(this.sessionId, { keepFrames, keepSeconds, now })
      .then(
        () => undefined,
        (e: unknown) => this.deps.logger.log('warn', 'log pruning failed', { session: this.sessionId, error: e }),
      )
      .finally(() => {
        this.pruning = null;
      });
  }
}

/** A stored log entry as a frame to send again. */
export function asFrame(e: LogEntry): LogFrame {
  // Lazy: an Output entry's JSON is built only for the frames a replay really sends. Its bytes
  // mark it as Output: a member that stops reading has replayed Output dropped like live Output
  // (member.ts), instead of queuing all of it.
  return {
    sequence: e.sequence,
    data: e.output?.data,
    get json() {
      return e.frame;
    },
  };
}
