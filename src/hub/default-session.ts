// The default session `pty-ws start` (`deno task start`) prints the URLs of: the server's own (no
// creator), labelled `default`. It runs on tmux whenever the PTY host offers it, so the shell, its
// cwd and history outlive a router restart (the host stays for the next router, which adopts it);
// without tmux it is native and ends with the router (docs/architecture.md, "The default session").
import type { Config } from '../core/config.ts';
import type { SessionHub } from './hub.ts';
import type { SessionHostCaps } from './session-host.ts';
import { newSessionRecord } from './session-record.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { SessionRecord, Store } from '../ports/store.ts';

export const DEFAULT_SESSION_LABEL = 'default';

/** A default session of some start: made by the server, not by a principal. */
export function isDefaultSession(r: Pick<SessionRecord, 'createdBy' | 'label'>): boolean {
  return r.createdBy === null && r.label === DEFAULT_SESSION_LABEL;
}

/** The backend a new default session runs on. */
export function defaultSessionBackend(setting: Config['defaultSessionBackend'], caps: SessionHostCaps): string {
  return setting === 'auto' && caps.backends.tmux ? 'tmux' : 'native';
}

export interface DefaultSessionDeps {
  config: Pick<Config, 'instanceId' | 'defaultCols' | 'defaultRows' | 'defaultSessionBackend'>;
  store: Pick<Store, 'listSessions' | 'createSession'>;
  hub: Pick<SessionHub, 'holds' | 'session' | 'kill'>;
  caps: SessionHostCaps;
  clock: Clock;
  logger: Logger;
}

/**
 * The default session for this start, called once the hub adopted what the PTY host runs: the
 * newest default session still running (it outlived the last router), else one nobody started
 * yet on the backend wanted now, else a new one. An unstarted one on another backend is ended, so
 * restarts do not pile up "default" sessions.
 */
export async function defaultSession(deps: DefaultSessionDeps): Promise<SessionRecord> {
  const { config, store, hub, caps, clock } = deps;
  const backend = defaultSessionBackend(config.defaultSessionBackend, caps);
  const open = (await store.listSessions(config.instanceId)).filter((r) => isDefaultSession(r) && r.state !== 'closed').reverse();
  // Adoption loaded every session the host still runs and ended every other one that had started.
  for (const r of open) {
    const live = hub.holds(r.id) ? await hub.session(r.id) : undefined;
    if (live?.state === 'running') return live.latestRecord;
  }
  const unstarted = open.filter((r) => r.state === 'created' && !hub.holds(r.id));
  const reused = unstarted.find((r) => r.backend === backend);
  for (const r of unstarted) {
    if (r === reused) continue;
    deps.logger.log('info', 'ending an unstarted default session of another backend', { session: r.id, backend: r.backend, wanted: backend });
    await hub.kill(r.id);
  }
  if (reused) return reused;
  const record = newSessionRecord(
    { instanceId: config.instanceId, caps, defaultCols: config.defaultCols, defaultRows: config.defaultRows, createdBy: null, now: clock.now() },
    { label: DEFAULT_SESSION_LABEL, session_backend: backend },
  );
  await store.createSession(record);
  return record;
}
