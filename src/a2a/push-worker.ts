// Delivers the push outbox of this instance's tasks (docs/a2a.md, "Push notifications"): each
// config's notifications one at a time and in order, several configs at once; a failed attempt is
// tried again after an exponential backoff with jitter, up to `attempts` tries, then given up on as
// a dead letter (logged, counted in /metrics). The queue lives in the database, so a restart picks
// up where the last router left; a row is claimed with a lease before it is sent, so two routers on
// one database never both send it. Nothing here holds up a session: task writes only queue rows.
import type { PushSettings } from '../core/config.ts';
import type { Clock, Timer, Timers } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { PushDelivery, PushStore } from '../ports/push-store.ts';
import type { Metrics } from '../core/metrics.ts';
import { artifactChunks } from './artifact-chunks.ts';
import { WebhookRefused, type WebhookSender } from './push-sender.ts';

export interface PushWorkerDeps {
  store: PushStore;
  sender: WebhookSender;
  instanceId: string;
  /** This router run: what its leases are held as. */
  owner: string;
  settings: PushSettings;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  metrics: Metrics;
  random?: () => number;
}

export class PushWorker {
  private readonly inFlight = new Map<number, AbortController>();
  /** Deliveries on their way per principal: a principal's slow webhooks hold up only its own. */
  private readonly byPrincipal = new Map<string, number>();
  private readonly settled = new Set<Promise<void>>();
  private timer: Timer | null = null;
  private passing: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly deps: PushWorkerDeps) {}

  /** Looks at the outbox now (new rows were queued, or a delivery ended). */
  wake(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = this.pass()
      .catch((e: unknown) => {
        this.deps.logger.log('error', 'push: the outbox could not be read; trying again later', { error: e });
        this.schedule(null);
      })
      .finally(() => {
        this.passing = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops: deliveries on their way are called off and left for the next router, at once (no lease to wait out). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.passing;
    for (const controller of this.inFlight.values()) controller.abort();
    await Promise.all(this.settled);
  }

  private async pass(): Promise<void> {
    const { store, instanceId, owner, settings, clock } = this.deps;
    for (const over of await store.trim(instanceId, settings.maxQueuedPerConfig)) {
      this.deps.logger.log('error', 'push: dead letters: a webhook fell too far behind, its oldest undelivered notifications were dropped', { task_id: over.taskId, config: over.configKey, dropped: over.dropped });
      this.deps.metrics.inc('push_dead_letters_total', { reason: 'queue_full' }, over.dropped);
    }
    const room = settings.concurrency - this.inFlight.size;
    // Due but waiting for one of its principal's deliveries on the way: that one's end wakes the worker.
    let held = false;
    if (room > 0) {
      const now = clock.now();
      // More than there is room for: some may be of principals that have their share on the way.
      for (const row of await store.due(instanceId, now, room * 4)) {
        if (this.stopped || this.inFlight.size >= settings.concurrency || this.inFlight.has(row.id)) continue;
        if ((this.byPrincipal.get(row.principalId) ?? 0) >= settings.concurrencyPerPrincipal) {
          held = true;
          continue;
        }
        if (!(await store.claim(row.id, owner, now + settings.leaseMs, now))) continue;
        this.begin(row);
      }
    }
    this.schedule(held || this.inFlight.size >= settings.concurrency ? null : await store.nextDue(instanceId));
  }

  private begin(row: PushDelivery): void {
    const controller = new AbortController();
    this.inFlight.set(row.id, controller);
    const { principalId } = row;
    this.byPrincipal.set(principalId, (this.byPrincipal.get(principalId) ?? 0) + 1);
    const done: Promise<void> = this.deliver(row, controller.signal)
      .catch((e: unknown) => this.deps.logger.log('error', 'push: a delivery could not be recorded', { task_id: row.taskId, error: e }))
      .finally(() => {
        this.inFlight.delete(row.id);
        const left = (this.byPrincipal.get(principalId) ?? 1) - 1;
        if (left > 0) this.byPrincipal.set(principalId, left);
        else this.byPrincipal.delete(principalId);
        this.settled.delete(done);
        this.wake();
      });
    this.settled.add(done);
  }

  /** Sleeps until `next` (ms), at most idlePollMs. */
  private schedule(next: number | null): void {
    this.timer?.cancel();
    if (this.stopped) return;
    const { idlePollMs } = this.deps.settings;
    const wait = next === null ? idlePollMs : Math.min(idlePollMs, Math.max(10, next - this.deps.clock.now()));
    this.timer = this.deps.timers.after(wait, () => this.wake());
  }

  private async deliver(row: PushDelivery, signal: AbortSignal): Promise<void> {
    const { store, owner, settings, clock } = this.deps;
    const bodies = await this.bodies(row);
    if (bodies === null) {
      await store.done(row.id, owner);
      return;
    }
    for (let chunk = row.chunk; chunk < bodies.length; chunk++) {
      try {
        await this.deps.sender.send(row, bodies[chunk]!, signal);
      } catch (e) {
        await this.failed(row, e);
        return;
      }
      if (chunk + 1 < bodies.length) await store.progressed(row.id, owner, chunk + 1, clock.now() + settings.leaseMs);
    }
    await store.done(row.id, owner);
    this.deps.metrics.inc('push_deliveries_total', { result: 'delivered' });
  }

  /** The POST bodies of a notification: its StreamResponse, or an artifact's chunks; null when its artifact is gone. */
  private async bodies(row: PushDelivery): Promise<string[] | null> {
    if (row.kind === 'status') return [row.event];
    const found = await this.deps.store.artifact(row.taskId, row.event);
    return found ? artifactChunks(row.taskId, found.contextId, found.artifact).map((artifactUpdate) => JSON.stringify({ artifactUpdate })) : null;
  }

  private async failed(row: PushDelivery, e: unknown): Promise<void> {
    const { store, owner, settings, clock, logger, metrics } = this.deps;
    const error = e instanceof Error ? e.message : String(e);
    const now = clock.now();
    // Called off by a stop: the next router sends it, without counting this as a try.
    if (this.stopped) return store.failed(row.id, owner, row.attempts, now, 'the router stopped while sending it');
    const attempts = row.attempts + 1;
    const fields = { task_id: row.taskId, config: row.configKey, webhook: origin(row.url), attempts, error: e, refused: e instanceof WebhookRefused };
    if (attempts >= settings.attempts) {
      await store.done(row.id, owner);
      logger.log('error', 'push: dead letter: a notification was given up on after its last try', fields);
      metrics.inc('push_dead_letters_total', { reason: e instanceof WebhookRefused ? 'refused' : 'attempts' });
      return;
    }
    const wait = Math.min(settings.maxRetryMs, settings.firstRetryMs * 2 ** (attempts - 1));
    const jittered = Math.round(wait / 2 + ((this.deps.random ?? Math.random)() * wait) / 2);
    await store.failed(row.id, owner, attempts, now + jittered, error);
    logger.log('warn', 'push: a notification was not delivered; it will be tried again', { ...fields, retry_in_ms: jittered });
    metrics.inc('push_deliveries_total', { result: 'retried' });
  }
}

/** A webhook as logs name it: its origin only (its path or query may hold a secret). */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '?';
  }
}
