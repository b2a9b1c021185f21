// One session's log (docs/protocol.md §3, §6): it numbers every log frame, writes it to the store,
// reads ranges back for replays, and keeps retention running in the background.
import { BindingError } from '../errors.ts';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { Clock, LogEntry, Logger, Store } from '../ports.ts';
import type { LogFrame, SessionEvent } from './types.ts';
import { encodeLogFrame } from './wire.ts';

export interface SessionLogDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  config: Pick<Config, 'replayBufferFrames' | 'replayRetentionSeconds'>;
}

export class SessionLog {
  private sequence: number;
  private framesSincePrune = 0;
  /** The prune under way, if any: retention runs one at a time. */
  private pruning: Promise<void> | null = null;

  constructor(
    private readonly sessionId: string,
    private readonly deps: SessionLogDeps,
    lastSequence: number,
  ) {
    this.sequence = lastSequence;
  }

  /** The latest sequence number given out. */
  get current(): number {
    return this.sequence;
  }

  /** Takes the next sequence number for the event, encodes it once and queues it for the store. */
  append(event: SessionEvent): LogFrame {
    const now = this.deps.clock.now();
    const sequence = ++this.sequence;
    const { kind, frame } = encodeLogFrame(event, sequence, now);
    this.deps.store.appendLog({ sessionId: this.sessionId, sequence, kind, createdAt: now, frame: frame.json });
    if (++this.framesSincePrune >= this.pruneEvery) this.prune(now);
    return frame;
  }

  /**
   * Log entries in (replayFrom, upTo] for a client catching up (a join, or SubscribeToTask), or the
   * REPLAY_OUT_OF_RANGE error to send it (docs/protocol.md §6.2).
   */
  async range(replayFrom: number, upTo: number): Promise<LogEntry[] | BindingError> {
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
    return (await this.deps.store.readLog(this.sessionId, replayFrom)).filter((e) => e.sequence <= upTo);
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
        (e: unknown) => this.deps.logger.log('warn', 'log pruning failed', { session: this.sessionId, error: String(e) }),
      )
      .finally(() => {
        this.pruning = null;
      });
  }
}

/** A stored log entry as a frame to send again. */
export function asFrame(e: LogEntry): LogFrame {
  return { sequence: e.sequence, json: e.frame };
}
