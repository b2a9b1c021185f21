// One router per instance id: the lease a router holds on it (docs/operations.md).
/** A claim on an instance id (docs/operations.md, "One router per instance"). */
export interface LeaseClaim {
  instanceId: string;
  /** A random token of the claiming router process. */
  owner: string;
  /** Names the claimant's state directory (from its lock): a holder with the same key is known dead. */
  stateKey: string;
  /** Who the claimant is, as JSON, for another router's refusal message. */
  holder: string;
  expiresAt: number;
  now: number;
}

export interface InstanceLease {
  owner: string;
  holder: string;
  expiresAt: number;
}

export interface InstanceLeaseStore {
  /** Takes the lease if it is free, expired, the claimant's, or held from the claimant's state directory; returns its holder after the attempt. */
  acquire(claim: LeaseClaim): Promise<InstanceLease>;
  /** Extends the lease while `owner` holds it; false when it does not (any more). */
  renew(instanceId: string, owner: string, expiresAt: number): Promise<boolean>;
  release(instanceId: string, owner: string): Promise<void>;
}
