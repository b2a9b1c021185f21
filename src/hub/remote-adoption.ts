// A remote PTY host linked, or linked again (docs/remote-hosts.md): before its events flow, the
// sessions this router placed on it are taken up from what it lists, exactly as the local host's
// are at a start (SessionHub.adopt): after a router restart they are loaded, so their output is
// logged rather than acknowledged unheard; those it no longer runs (it restarted: native sessions
// die with it) end as errors; one ended here that it still runs is killed.
import type { Logger } from '../ports/logger.ts';
import type { PtySessionInfo } from '../ports/pty-host.ts';
import type { Store } from '../ports/store.ts';
import type { LiveSession } from './live-session.ts';

export interface RemoteAdoptionDeps {
  store: Pick<Store, 'listSessions'>;
  instanceId: string;
  live(sessionId: string): Promise<LiveSession | undefined>;
  kill(sessionId: string): void;
  logger: Logger;
}

export async function adoptRemoteSessions(deps: RemoteAdoptionDeps, host: string, listed: readonly PtySessionInfo[]): Promise<void> {
  const runs = new Map(listed.map((info) => [info.sessionId, info]));
  for (const rec of await deps.store.listSessions(deps.instanceId)) {
    if (rec.host !== host || (rec.state === 'closed' && !runs.has(rec.id))) continue;
    const info = runs.get(rec.id);
    const s = await deps.live(rec.id);
    const state = s?.state ?? rec.state;
    if (state === 'closed') {
      if (info && info.pid > 0) {
        deps.logger.log('warn', 'a remote PTY host runs a session that is closed here: killing it', { session: rec.id, host });
        deps.kill(rec.id);
      }
    } else if (info) s?.adopted(info);
    else if (state === 'running') s?.terminate('error', `the PTY host ${host} linked again without this session's process (it restarted)`);
  }
}

/** The sessions of this instance placed on `host`, whatever their state. */
export async function sessionsPlacedOn(store: Pick<Store, 'listSessions'>, instanceId: string, host: string): Promise<ReadonlySet<string>> {
  return new Set((await store.listSessions(instanceId)).filter((rec) => rec.host === host).map((rec) => rec.id));
}
