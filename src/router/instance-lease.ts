// One router per instance id on one database (docs/operations.md, "One router per instance"):
// the lease is taken at start, renewed by a heartbeat, released at a clean stop. A router that
// cannot renew it before it expires, or finds it taken, stops serving: by then another router may
// hold it.
import type { Clock } from '../ports/clock.ts';
import type { InstanceLeaseStore } from '../ports/instance-lease.ts';
import type { Logger } from '../ports/logger.ts';

export class InstanceLeasedError extends Error {
  constructor(
    readonly instanceId: string,
    detail: string,
  ) {
    super(`instance ${instanceId} is served by another pty-ws router on this database (${detail}): stop that one first, or give this one another PTY_WS_INSTANCE_ID`);
    this.name = 'InstanceLeasedError';
  }
}

export interface LeaseOptions {
  store: InstanceLeaseStore;
  instanceId: string;
  /** From the state directory's lock (src/core/state-lock.ts). */
  stateKey: string;
  /** Who this router is, for another router's refusal: pid, state directory, ... */
  holder: Record<string, unknown>;
  ttlMs: number;
  clock: Clock;
  logger: Logger;
  /** The lease is gone (taken over, or not renewed in time): the router must stop serving. */
  lost(error: Error): void;
}

export interface HeldLease {
  /** Stops the heartbeat and frees the lease so the next router starts at once. */
  release(): Promise<void>;
}

/** Takes the instance's lease, or throws InstanceLeasedError naming its holder; then renews it every third of its term. */
export async function holdInstanceLease(o: LeaseOptions): Promise<HeldLease> {
  const owner = crypto.randomUUID();
  const now = o.clock.now();
  const holder = JSON.stringify({ ...o.holder, since: new Date(now).toISOString() });
  const got = await o.store.acquire({ instanceId: o.instanceId, owner, stateKey: o.stateKey, holder, expiresAt: now + o.ttlMs, now });
  if (got.owner !== owner) throw new InstanceLeasedError(o.instanceId, `${describe(got.holder)}, lease renewed until ${new Date(got.expiresAt).toISOString()}`);

  let validUntil = now + o.ttlMs;
  let done = false;
  let renewing: Promise<void> = Promise.resolve();
  const fail = (why: string) => {
    if (done) return;
    done = true;
    clearInterval(timer);
    const error = new Error(`lost the lease on instance ${o.instanceId}: ${why}`);
    o.logger.log('error', 'instance lease lost: stopping', { instance: o.instanceId, reason: why });
    o.lost(error);
  };
  const renew = async () => {
    const at = o.clock.now();
    try {
      if (await o.store.renew(o.instanceId, owner, at + o.ttlMs)) validUntil = at + o.ttlMs;
      else fail('another router took it over');
    } catch (e) {
      o.logger.log('warn', 'instance lease not renewed', { instance: o.instanceId, error: e, valid_until: new Date(validUntil).toISOString() });
      // Past its term another router may take it: stop claiming the instance.
      if (o.clock.now() >= validUntil) fail(`the database did not take a renewal for ${o.ttlMs} ms`);
    }
  };
  const timer = setInterval(() => {
    if (!done) renewing = renewing.then(renew);
  }, Math.max(100, Math.floor(o.ttlMs / 3)));

  return {
    async release() {
      if (done) return;
      done = true;
      clearInterval(timer);
      await renewing;
      await o.store.release(o.instanceId, owner).catch((e: unknown) => o.logger.log('warn', 'instance lease not released: it expires by itself', { instance: o.instanceId, error: e }));
    },
  };
}

function describe(holder: string): string {
  try {
    const h = JSON.parse(holder) as { pid?: unknown; host?: unknown; state_dir?: unknown; since?: unknown };
    return `pid ${String(h.pid)}${h.host ? ` on ${String(h.host)}` : ''}, state directory ${String(h.state_dir)}, since ${String(h.since)}`;
  } catch {
    return 'holder unknown';
  }
}
