// Remote PTY hosts' credentials (docs/remote-hosts.md), of which only the hash is kept.
/** A remote PTY host's credential (docs/remote-hosts.md): its name and the SHA-256 of its token. */
export interface HostRecord {
  instanceId: string;
  name: string;
  tokenSha256: string;
  createdBy: string;
  /** ISO-8601 UTC. */
  createdAt: string;
}

export interface HostStore {
  /** Stores the host's credential, replacing any earlier one of that name (whose token is refused from now on). */
  put(rec: HostRecord): Promise<void>;
  byTokenHash(tokenSha256: string): Promise<HostRecord | undefined>;
  list(instanceId: string): Promise<HostRecord[]>;
  /** Revokes it; false when there was none. */
  remove(instanceId: string, name: string): Promise<boolean>;
}
