// Applies retention and the log budgets (docs/operations.md, "Disk") once at start and then every
// `retentionSweepMs`: ended sessions and finished tasks go after PTY_WS_ENDED_RETENTION_SECONDS,
// each log is cut to PTY_WS_SESSION_LOG_BUDGET_BYTES, and all of them to PTY_WS_LOG_BUDGET_BYTES
// (ended sessions' logs first, then an equal share for each live one). One sweep at a time.
import type { Config } from '../core/config.ts';
import type { Metrics } from '../core/metrics.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { LogRetention } from '../ports/store.ts';

export interface RetentionSweepDeps {
  retention: LogRetention;
  /** Tells the store the budget and the bytes measured (creations past it are refused, storage/store.ts). */
  limitLogBytes(limit: { bytes: number; measured: number; exceeded: () => void }): void;
  config: Pick<Config, 'instanceId' | 'endedRetentionSeconds' | 'sessionLogBudgetBytes' | 'logBudgetBytes' | 'retentionSweepMs'>;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}

export class RetentionSweep {
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | null = null;

  constructor(private readonly deps: RetentionSweepDeps) {}

  /** Sweeps now, then every `retentionSweepMs`, until `stop`. */
  start(): Promise<void> {
    this.#timer ??= setInterval(() => void this.run(), this.deps.config.retentionSweepMs);
    // Never the reason the process stays up.
    (this.#timer as { unref?: () => void }).unref?.();
    return this.run();
  }

  stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    return this.#running ?? Promise.resolve();
  }

  /** One sweep (the one under way, if any); a failure is logged and the next one tries again. */
  run(): Promise<void> {
    this.#running ??= this.#sweep()
      .catch((e: unknown) => this.deps.logger.log('warn', 'retention: the sweep failed; the next one tries again', { error: e }))
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }

  async #sweep(): Promise<void> {
    const { retention, config, metrics, logger } = this.deps;
    const id = config.instanceId;
    const before = new Date(this.deps.clock.now() - config.endedRetentionSeconds * 1000).toISOString();
    const sessions = await retention.deleteEnded(id, before);
    const tasks = await retention.deleteFinished(id, before);
    metrics.inc('retention_deleted_total', { what: 'sessions' }, sessions);
    metrics.inc('retention_deleted_total', { what: 'tasks' }, tasks);
    const trimmed = await retention.trimOver(id, config.sessionLogBudgetBytes);
    metrics.inc('log_budget_pruned_bytes_total', { scope: 'session' }, trimmed);
    let total = await retention.logBytes(id);
    let ended = 0;
    let live = 0;
    if (total > config.logBudgetBytes) {
      ended = await retention.dropEndedLogs(id, total - config.logBudgetBytes);
      total -= ended;
      metrics.inc('log_budget_pruned_bytes_total', { scope: 'ended' }, ended);
    }
    if (total > config.logBudgetBytes) {
      const share = Math.floor(config.logBudgetBytes / Math.max(1, await retention.liveWithLogs(id)));
      live = await retention.trimOver(id, share);
      total -= live;
      metrics.inc('log_budget_pruned_bytes_total', { scope: 'live' }, live);
    }
    if (sessions + tasks + trimmed + ended + live > 0) {
      logger.log('info', 'retention: deleted what is kept no longer', { sessions, tasks, sessionBudgetBytes: trimmed, endedLogBytes: ended, liveLogBytes: live, logBytes: total });
    }
    this.deps.limitLogBytes({
      bytes: config.logBudgetBytes,
      measured: total,
      exceeded: () => {
        metrics.inc('log_budget_refusals_total');
        void this.run();
      },
    });
  }
}
