// `pty-ws share <session>`: mint, list and revoke share links from the command line (docs/sharing.md).
import { SessionsApi, type MintShareBody, type ShareInfo } from '../../../client/sessions-api.ts';
import type { ClientConfig } from '../../../core/config.ts';
import { printable } from './printable.ts';
import { reportFailure, reportUsage } from './report.ts';
import { table } from './table.ts';

export const SHARE_USAGE = `usage:
  pty-ws share <session> [--control] [--expires DURATION] [--label NAME] [--json]
              mint a share link (watch-only unless --control) and print its page URL;
              DURATION like 90s, 30m, 2h, 7d (default 1h, at most 7d)
  pty-ws share <session> --list [--json]
  pty-ws share <session> --revoke SHARE_ID
  pty-ws share --revoke-all [--principal NAME]
              revoke every share link of this instance you minted (with pty:admin: NAME minted)
<session> is a session id, a unique prefix of one, or a label.
common flags: --url http://host:port (PTY_WS_URL), --token T (PTY_WS_TOKEN), --instance ID (PTY_WS_INSTANCE_ID)
`;

export const SHARE_FLAGS = ['token', 'url', 'instance', 'json', 'control', 'expires', 'label', 'list', 'revoke', 'revoke-all', 'principal'];
export const SHARE_BOOLEAN_FLAGS = ['control', 'list', 'json', 'revoke-all'];

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** "90s", "30m", "2h", "7d" or plain seconds; undefined when it is none of these. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  return m ? Number(m[1]) * UNIT_SECONDS[m[2] || 's']! : undefined;
}

export async function shareCommand(sessionId: string | undefined, flags: Record<string, string>, config: ClientConfig): Promise<number> {
  const api = new SessionsApi({ origin: config.serverUrl, instanceId: config.instanceId, token: config.token ?? null });
  const out = (s: string) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
  if (flags['revoke-all']) return revokeAll(api, flags.principal, config, out);
  if (flags.principal) return usage('--principal goes with --revoke-all');
  if (!sessionId) return usage('which session?');
  try {
    if (flags.list) {
      const list = await api.listShares(sessionId);
      out(flags.json ? JSON.stringify(list, null, 2) : shareTable(list));
      return 0;
    }
    if (flags.revoke) {
      await api.revokeShare(sessionId, flags.revoke);
      out(`${flags.revoke}: revoked`);
      return 0;
    }
    const body: MintShareBody = { scope: flags.control ? 'pty:control' : 'pty:observe' };
    if (flags.expires) {
      const seconds = parseDuration(flags.expires);
      if (seconds === undefined) return usage(`--expires ${JSON.stringify(flags.expires)} is not a duration like 30m, 2h or 7d`);
      body.expires_in = seconds;
    }
    if (flags.label) body.label = flags.label;
    const share = await api.mintShare(sessionId, body);
    if (flags.json) {
      out(JSON.stringify(share, null, 2));
    } else {
      out(share.url);
      process.stderr.write(`share ${share.share_id}: ${share.scope === 'pty:control' ? 'may type' : 'watch only'}, until ${share.expires_at} (revoke: pty-ws share ${sessionId} --revoke ${share.share_id})\n`);
    }
    return 0;
  } catch (e) {
    return reportFailure(e, config.serverUrl);
  }
}

const usage = (problem: string) => reportUsage('share', problem, SHARE_USAGE);

async function revokeAll(api: SessionsApi, principal: string | undefined, config: ClientConfig, out: (s: string) => void): Promise<number> {
  try {
    const revoked = await api.revokeSharesOf(principal);
    out(`${revoked} share link${revoked === 1 ? '' : 's'} revoked${principal === undefined ? '' : ` (minted by ${printable(principal)})`}`);
    return 0;
  } catch (e) {
    return reportFailure(e, config.serverUrl);
  }
}

function shareTable(list: ShareInfo[]): string {
  if (list.length === 0) return 'no active shares';
  const rows = list.map((s) => [s.share_id, s.scope, printable(s.label ?? ''), printable(s.created_by), s.expires_at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')]);
  return table(['SHARE ID', 'SCOPE', 'LABEL', 'CREATED BY', 'EXPIRES'], rows);
}
