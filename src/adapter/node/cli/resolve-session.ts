// Wherever a client command takes a session id it also takes a unique prefix of one, or a label
// (docs/cli.md): `pty-ws attach 01a2`, `pty-ws share build`. A whole id is used as it is, without a
// request; anything else is looked up in the session list.
import type { SessionInfo, SessionsApi } from '../../../client/sessions-api.ts';
import { printable } from './printable.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The session id `given` names, or a problem to report (none matches, or several do). */
export async function resolveSession(given: string, api: Pick<SessionsApi, 'list'>): Promise<{ id: string } | { problem: string }> {
  if (UUID.test(given)) return { id: given };
  const sessions = await api.list();
  const byId = sessions.filter((s) => s.session_id.startsWith(given.toLowerCase()));
  // Labels repeat (every start's default session is "default"): the sessions not ended come first.
  const labelled = sessions.filter((s) => s.label === given);
  const open = labelled.filter((s) => s.state !== 'closed');
  const byLabel = open.length > 0 ? open : labelled;
  const matches = byId.length > 0 ? byId : byLabel;
  if (matches.length === 1) return { id: matches[0]!.session_id };
  if (matches.length === 0) return { problem: `no session has an id starting with, or the label, ${JSON.stringify(printable(given))} (pty-ws sessions list)` };
  return { problem: `${JSON.stringify(printable(given))} is ambiguous: it names ${matches.length} sessions (${matches.slice(0, 5).map(describe).join(', ')}${matches.length > 5 ? ', …' : ''}); give more of the id` };
}

/** The default session `pty-ws start` made that still runs (the newest, should there be several). */
export async function resolveDefaultSession(api: Pick<SessionsApi, 'list'>): Promise<{ id: string } | { problem: string }> {
  const live = (await api.list()).filter((s) => s.default_session === true && s.state !== 'closed');
  const newest = live.at(-1);
  return newest ? { id: newest.session_id } : { problem: 'no default session runs there (pty-ws start makes one): name a session, e.g. with &session=<id> in the URL' };
}

function describe(s: SessionInfo): string {
  return `${s.session_id.slice(0, 13)}… ${printable(s.label ?? s.state)}`;
}
