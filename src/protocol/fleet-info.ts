// The fleet reads (docs/deployment.md, "A fleet"; INTERFACE "The fleet"): GET /instances and
// GET /sessions, as the routes send them and the CLI parses them.
import * as v from 'valibot';
import { SessionInfo } from './session-info.ts';

export const InstanceInfo = v.object({
  instance_id: v.string(),
  base_url: v.string(),
  version: v.string(),
  /** ISO-8601 UTC. */
  started_at: v.string(),
  /** ISO-8601 UTC of its latest heartbeat. */
  last_seen_at: v.string(),
  /** Its heartbeat is current and it has not stopped. */
  reachable: v.boolean(),
});
export type InstanceInfo = v.InferOutput<typeof InstanceInfo>;

export const InstanceList = v.object({ instances: v.array(InstanceInfo) });
export type InstanceList = v.InferOutput<typeof InstanceList>;

/** A session of any instance: the per-instance listing's fields, `attach_url` at its owner, and whether the owner is reachable. */
export const FleetSessionInfo = v.object({ ...SessionInfo.entries, reachable: v.boolean() });
export type FleetSessionInfo = v.InferOutput<typeof FleetSessionInfo>;

export const FleetSessionList = v.object({ sessions: v.array(FleetSessionInfo) });
export type FleetSessionList = v.InferOutput<typeof FleetSessionList>;
