// The fleet’s registry of instances (docs/deployment.md, "A fleet").
import type { SessionRecord } from './store.ts';

/** One instance in the registry (docs/deployment.md, "A fleet"). */
export interface InstanceRecord {
  instanceId: string;
  /** A random token of the router run that wrote it. */
  owner: string;
  /** The http(s) origin clients reach it at (PTY_WS_PUBLIC_URL, else its listen URL). */
  baseUrl: string;
  version: string;
  /** ISO-8601 UTC. */
  startedAt: string;
  /** Milliseconds since the epoch, by the instance's own clock. */
  lastSeenAt: number;
  /** Its heartbeat cadence, by which readers judge its last_seen_at stale. */
  heartbeatMs: number;
  /** Set by a clean stop; null while it runs (or after it died without one). */
  stoppedAt: number | null;
}

export interface InstanceRegistryStore {
  /** Records the instance as started now, replacing what an earlier run of it left (the caller holds its lease). */
  register(rec: InstanceRecord): Promise<void>;
  /** Writes the row only where the instance has none (someone removed it); never replaces another run's. */
  restore(rec: InstanceRecord): Promise<void>;
  /** Moves its last_seen_at while `owner`'s run wrote the row; false otherwise. */
  heartbeat(instanceId: string, owner: string, at: number): Promise<boolean>;
  /** Marks a clean stop of `owner`'s run (a later run's row is left alone). */
  stopped(instanceId: string, owner: string, at: number): Promise<void>;
  list(): Promise<InstanceRecord[]>;
  /** The sessions of every registered instance, oldest first. */
  registeredSessions(): Promise<SessionRecord[]>;
  get(instanceId: string): Promise<InstanceRecord | undefined>;
  /** The registered instance that owns the session, if any. */
  sessionOwner(sessionId: string): Promise<InstanceRecord | undefined>;
}
