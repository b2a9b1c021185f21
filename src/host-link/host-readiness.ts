// /readyz with remote PTY hosts (docs/operations.md, "Observing it"): each host that sessions of
// this router are placed on is needed by them, so each is a check of its own, ready while linked.
import type { Store } from '../ports/store.ts';
import type { ReadinessCheck } from '../core/readiness.ts';

/** One check `host:<name>` per remote host with sessions here that have not ended. */
export async function remoteHostChecks(store: Pick<Store, 'listSessions'>, instanceId: string, placed: { linked(name: string): unknown }): Promise<ReadinessCheck[]> {
  const names = new Set<string>();
  try {
    for (const r of await store.listSessions(instanceId)) if (r.host && r.state !== 'closed') names.add(r.host);
  } catch {
    return []; // the database check says so
  }
  return [...names].sort().map((name) => ({
    name: `host:${name}`,
    check: () => (placed.linked(name) ? Promise.resolve() : Promise.reject(new Error(`the PTY host ${name} is not linked to this router`))),
  }));
}
