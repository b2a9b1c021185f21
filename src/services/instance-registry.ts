// The instance registry (docs/deployment.md, "A fleet"): a router records where clients reach it
// once it listens, then beats a heartbeat into the shared database; readers judge an instance
// reachable while its latest beat is younger than HEARTBEAT_MISSES of its own intervals. The
// lease (instance-lease.ts) already guarantees one writer per instance id, so the row needs no
// owner of its own.
import { HEARTBEAT_MISSES } from '../core/config.ts';
import type { Clock } from '../ports/clock.ts';
import type { InstanceRecord, InstanceRegistryStore } from '../ports/instance-registry.ts';
import type { Logger } from '../ports/logger.ts';
import type { InstanceInfo } from '../protocol/fleet-info.ts';

export interface HeartbeatOptions {
  store: InstanceRegistryStore;
  instanceId: string;
  /** The http(s) origin clients reach this instance at (PTY_WS_PUBLIC_URL, else the listen URL). */
  baseUrl: string;
  version: string;
  /** PTY_WS_HEARTBEAT_MS. */
  intervalMs: number;
  clock: Clock;
  logger: Logger;
}

export interface Heartbeat {
  /** Stops beating and marks the instance stopped, so readers see it unreachable at once. */
  stop(): Promise<void>;
}

/** Registers the instance as started now and beats every `intervalMs`; rejects when the first write fails. */
export async function startHeartbeat(o: HeartbeatOptions): Promise<Heartbeat> {
  const started = o.clock.now();
  const owner = crypto.randomUUID();
  const record = (now: number): InstanceRecord => ({
    instanceId: o.instanceId,
    owner,
    baseUrl: o.baseUrl,
    version: o.version,
    startedAt: new Date(started).toISOString(),
    lastSeenAt: now,
    heartbeatMs: o.intervalMs,
    stoppedAt: null,
  });
  await o.store.register(record(started));

  let done = false;
  let beating: Promise<void> = Promise.resolve();
  const beat = async () => {
    const at = o.clock.now();
    try {
      // A row someone removed (an operator cleaning the registry) is written again; one a later
      // run of this instance wrote (this router lost its lease and is stopping) is left alone.
      if (!(await o.store.heartbeat(o.instanceId, owner, at))) await o.store.restore(record(at));
    } catch (e) {
      // The database is away: readers will see this instance unreachable, which it is for them.
      o.logger.log('warn', 'instance heartbeat not recorded', { instance: o.instanceId, error: e });
    }
  };
  const timer = setInterval(() => {
    if (!done) beating = beating.then(beat);
  }, o.intervalMs);

  return {
    async stop() {
      if (done) return;
      done = true;
      clearInterval(timer);
      await beating;
      await o.store.stopped(o.instanceId, owner, o.clock.now()).catch((e: unknown) => o.logger.log('warn', 'instance not marked stopped: it turns unreachable when its heartbeat goes stale', { instance: o.instanceId, error: e }));
    },
  };
}

/** Whether readers should send clients to it: running, and a heartbeat within HEARTBEAT_MISSES intervals. */
export function isReachable(rec: InstanceRecord, now: number): boolean {
  return rec.stoppedAt === null && now - rec.lastSeenAt <= rec.heartbeatMs * HEARTBEAT_MISSES;
}

export function instanceInfo(rec: InstanceRecord, now: number): InstanceInfo {
  return {
    instance_id: rec.instanceId,
    base_url: rec.baseUrl,
    version: rec.version,
    started_at: rec.startedAt,
    last_seen_at: new Date(rec.lastSeenAt).toISOString(),
    reachable: isReachable(rec, now),
  };
}
