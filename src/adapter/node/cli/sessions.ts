// `pty-ws sessions list|create|delete`: the REST control plane from the command line.
import { SessionsApi, type CreateSessionBody, type FleetSessionInfo, type SessionInfo } from '../../../client/sessions-api.ts';
import type { ClientConfig } from '../../../core/config.ts';
import { printable, printableJson } from './printable.ts';
import { reportFailure, reportUsage } from './report.ts';
import { table } from './table.ts';

export const SESSIONS_USAGE = `usage:
  pty-ws sessions list [--all] [--json]   (--all: every instance sharing the server's database)
  pty-ws sessions create [--command CMD] [--label L] [--cwd DIR] [--cols N --rows N]
                         [--backend native|tmux|screen] [--host NAME] [--json]
  pty-ws sessions delete <session>
<session> is a session id, a unique prefix of one, or a label (as for attach and share).
common flags: --url http://host:port (PTY_WS_URL), --token T (PTY_WS_TOKEN), --instance ID (PTY_WS_INSTANCE_ID)
`;

export async function sessionsCommand(sub: string | undefined, positional: string[], flags: Record<string, string>, config: ClientConfig): Promise<number> {
  const api = new SessionsApi({ origin: config.serverUrl, instanceId: config.instanceId, token: config.token ?? null });
  const out = (s: string) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
  try {
    switch (sub) {
      case 'list': {
        if (flags.all) {
          const fleet = await api.listFleet();
          out(flags.json ? printableJson(fleet) : fleetTable(fleet));
          return 0;
        }
        const list = await api.list();
        out(flags.json ? printableJson(list) : sessionTable(list));
        return 0;
      }
      case 'create': {
        const body = createBody(flags);
        if (typeof body === 'string') return usage(body);
        const s = await api.create(body);
        out(flags.json ? printableJson(s) : `${printable(s.session_id)}\n${printable(s.attach_url)}`);
        return 0;
      }
      case 'delete': {
        const id = positional[0];
        if (!id) return usage('delete needs a session id');
        const r = await api.delete(id);
        out(printable(r.terminated ? `${id}: ${r.state === 'closed' ? 'terminated' : 'terminating'}` : `${id}: already ${r.state}`));
        return 0;
      }
      default:
        return usage(sub ? `unknown subcommand "${sub}"` : 'which subcommand?');
    }
  } catch (e) {
    return reportFailure(e, config.serverUrl);
  }
}

const usage = (problem: string) => reportUsage('sessions', problem, SESSIONS_USAGE);

function createBody(flags: Record<string, string>): CreateSessionBody | string {
  const body: CreateSessionBody = {};
  if (flags.command) body.command = flags.command;
  if (flags.label) body.label = flags.label;
  if (flags.cwd) body.cwd = flags.cwd;
  // A remote PTY host that dialed in (docs/remote-hosts.md); the server checks the name.
  if (flags.host) body.host = flags.host;
  // tmux/screen sessions outlive the router (docs/backends.md).
  if (flags.backend) {
    if (!['native', 'tmux', 'screen'].includes(flags.backend)) return `--backend ${JSON.stringify(flags.backend)}: native, tmux or screen`;
    body.session_backend = flags.backend;
  }
  if (flags.cols || flags.rows) {
    const cols = Number(flags.cols);
    const rows = Number(flags.rows);
    if (!Number.isInteger(cols) || !Number.isInteger(rows)) return '--cols and --rows go together, as integers';
    body.terminal_size = { cols, rows };
  }
  return body;
}

function sessionTable(list: SessionInfo[]): string {
  if (list.length === 0) return 'no sessions';
  return table(['SESSION ID', 'STATE', 'HOST', 'CREATED', 'LABEL', 'COMMAND'], list.map(sessionRow));
}

/** The fleet: which instance owns each session, and whether that instance answers. */
function fleetTable(list: FleetSessionInfo[]): string {
  if (list.length === 0) return 'no sessions';
  const rows = list.map((s) => [printable(s.instance_id), s.reachable ? 'yes' : 'no', ...sessionRow(s)]);
  return table(['INSTANCE', 'REACHABLE', 'SESSION ID', 'STATE', 'HOST', 'CREATED', 'LABEL', 'COMMAND'], rows);
}

function sessionRow(s: SessionInfo): string[] {
  return [
    printable(s.session_id),
    printable(s.state === 'closed' && s.exit_code !== null ? `closed (${s.exit_code})` : s.state),
    // The remote PTY host it runs on (docs/remote-hosts.md); `-` for the router's own.
    printable(s.host ?? '-'),
    printable(s.created_at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')),
    printable(s.label ?? ''),
    printable(s.command ?? (s.argv ? s.argv.join(' ') : '')),
  ];
}
