// Push notification configs and their outbox (docs/a2a.md).
import type { Artifact } from '../protocol/a2a.ts';

/** A task's webhook, as one principal set it. */
export interface PushConfigRecord {
  /** The row's own id, which its deliveries name. */
  key: string;
  taskId: string;
  principalId: string;
  /** The A2A `id`, unique per task and principal. */
  configId: string;
  url: string;
  token: string | null;
  authScheme: string | null;
  authCredentials: string | null;
  /** ISO-8601 UTC. */
  createdAt: string;
}

/** One queued notification of the outbox, with its config's webhook. */
export interface PushDelivery {
  id: number;
  configKey: string;
  taskId: string;
  /** Who set its config. */
  principalId: string;
  /** `status`: `event` is the StreamResponse JSON. `artifact`: `event` is the artifact id, sent as its chunks from `chunk` on. */
  kind: 'status' | 'artifact';
  event: string;
  chunk: number;
  /** Failed attempts so far. */
  attempts: number;
  url: string;
  token: string | null;
  authScheme: string | null;
  authCredentials: string | null;
}

export interface PushStore {
  /** Stores the config, replacing the principal's config of that task with the same `configId`; resolves with what is stored. */
  saveConfig(rec: PushConfigRecord): Promise<PushConfigRecord>;
  config(taskId: string, principalId: string, configId: string): Promise<PushConfigRecord | undefined>;
  /** The principal's configs of the task in creation order, after the one keyed `afterKey`; `next` when more follow. */
  configs(taskId: string, principalId: string, page: { pageSize: number; afterKey?: string }): Promise<{ configs: PushConfigRecord[]; next: string | null }>;
  countConfigs(taskId: string, principalId: string): Promise<number>;
  /** Deletes the config and its undelivered notifications; false when there was none. */
  deleteConfig(taskId: string, principalId: string, configId: string): Promise<boolean>;
  /** Up to `limit` notifications of the instance's tasks due at `now`, each the oldest of its config, none leased; soonest first. */
  due(instanceId: string, now: number, limit: number): Promise<PushDelivery[]>;
  /** When the instance's next notification falls due (ms), or null when none is queued. */
  nextDue(instanceId: string): Promise<number | null>;
  /** Takes the notification for `owner` until `leaseUntil`, unless another holds it at `now`; false when another has it. */
  claim(id: number, owner: string, leaseUntil: number, now: number): Promise<boolean>;
  /** Chunks before `chunk` were delivered; the lease is extended. */
  progressed(id: number, owner: string, chunk: number, leaseUntil: number): Promise<void>;
  /** Delivered (or given up on): the row goes. */
  done(id: number, owner: string): Promise<void>;
  /** A failed attempt: tried again from `nextAttemptAt`, by whichever router then claims it. */
  failed(id: number, owner: string, attempts: number, nextAttemptAt: number, error: string): Promise<void>;
  /** Trims each of the instance's configs to its oldest `keep` notifications; what went, per config. */
  trim(instanceId: string, keep: number): Promise<Array<{ configKey: string; taskId: string; dropped: number }>>;
  /** An artifact of a task, for its notification. */
  artifact(taskId: string, artifactId: string): Promise<{ contextId: string; artifact: Artifact } | undefined>;
}
