// A stored session as REST describes it (docs/protocol.md §10), shared by the instance's own
// listing (routes/sessions.ts) and the fleet's (routes/fleet.ts).
import { isDefaultSession } from '../src/hub/default-session.ts';
import type { SessionRecord } from '../src/ports/store.ts';
import type { SessionInfo } from '../src/protocol/session-info.ts';
import { attachUrl } from './request.ts';

/**
 * `wsOrigin` is where its instance is reached; `ptyHostUnreachable` when its process cannot be
 * vouched for; `hostUnlinked` when it runs on a remote host whose link is down (its state reads
 * `host_unreachable`, docs/remote-hosts.md).
 */
export function sessionInfo(r: SessionRecord, wsOrigin: string, ptyHostUnreachable: boolean, hostUnlinked = false): SessionInfo {
  return {
    session_id: r.id,
    instance_id: r.instanceId,
    attach_url: attachUrl(wsOrigin, r.instanceId, r.id),
    session_backend: r.backend,
    session_class: r.sessionClass,
    label: r.label,
    argv: r.argv,
    command: r.command,
    cwd: r.cwd,
    terminal_size: { cols: r.cols, rows: r.rows },
    state: r.state === 'running' && hostUnlinked ? 'host_unreachable' : r.state,
    // undefined is left out of the JSON body.
    pty_host: ptyHostUnreachable ? 'unreachable' : undefined,
    host: r.host ?? undefined,
    created_at: r.createdAt,
    closed_at: r.closedAt,
    exit_code: r.exitCode,
    close_reason: r.closeReason,
    default_session: isDefaultSession(r) ? true : undefined,
  };
}

/** Whether a running session's remote host is not linked to this router now. */
export function onUnlinkedHost(r: SessionRecord, linked: (host: string) => unknown): boolean {
  return r.state === 'running' && r.host !== null && !linked(r.host);
}
