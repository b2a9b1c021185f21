// The client commands of `pty-ws` (`attach`, `sessions`, `share`): flags checked, settings read, command run.
import { SessionsApi } from '../../../client/sessions-api.ts';
import { ConfigError, loadClientConfig, parseArgs, type ClientConfig } from '../../../core/config.ts';
import { attachCommand } from './attach.ts';
import { SESSIONS_USAGE, sessionsCommand } from './sessions.ts';
import { SHARE_BOOLEAN_FLAGS, SHARE_FLAGS, SHARE_USAGE, shareCommand } from './share.ts';
import { printable } from './printable.ts';
import { describeUnreachable, reportFailure } from './report.ts';
import { resolveDefaultSession, resolveSession } from './resolve-session.ts';
import { parsePageUrl } from '../../../client/page-url.ts';

const ATTACH_FLAGS = ['token', 'url', 'instance', 'observe', 'binary', 'clipboard', 'label'];
const SESSIONS_FLAGS = ['token', 'url', 'instance', 'json', 'all', 'command', 'label', 'cwd', 'cols', 'rows', 'backend', 'host'];

/** `attach` and `sessions`: clients of a running server, configured by their own flags and env. */
export async function clientCommand(argv: string[], usage: string): Promise<number> {
  const args = parseArgs(argv, ['observe', 'binary', 'clipboard', 'json', 'all', ...SHARE_BOOLEAN_FLAGS]);
  const known = args.command === 'attach' ? ATTACH_FLAGS : args.command === 'share' ? SHARE_FLAGS : SESSIONS_FLAGS;
  const unknown = Object.keys(args.flags).filter((f) => !known.includes(f));
  if (unknown.length) {
    process.stderr.write(`pty-ws ${args.command}: unknown flag ${unknown.map((f) => `--${f}`).join(', ')}\n`);
    return 2;
  }
  if (args.command === 'sessions' && (args.help || args.positional.length === 0)) {
    process.stdout.write(SESSIONS_USAGE);
    return args.help ? 0 : 2;
  }
  const config = configOrReport(() => loadClientConfig(process.env, args.flags));
  if (!config) return 2;
  if (args.command === 'share') {
    if (args.help) {
      process.stdout.write(SHARE_USAGE);
      return 0;
    }
    // --revoke-all names no session.
    const id = args.positional[0] === undefined || args.flags['revoke-all'] ? undefined : await sessionIdOr(args.positional[0], config, 1);
    if (typeof id === 'number') return id;
    return shareCommand(id, args.flags, config);
  }
  if (args.command === 'sessions') {
    const [sub, given] = args.positional;
    if (sub !== 'delete' || given === undefined) return sessionsCommand(sub, args.positional.slice(1), args.flags, config);
    const id = await sessionIdOr(given, config, 1);
    return typeof id === 'number' ? id : sessionsCommand(sub, [id], args.flags, config);
  }
  const target = args.positional[0];
  if (args.help || !target) {
    process.stdout.write(usage);
    return args.help ? 0 : 2;
  }
  // The page's URL (`pty-ws start`'s, a share link): its server, token, session, watch flag and
  // label, each unless a flag says otherwise; without a session, the default session.
  const link = parsePageUrl(target);
  const attachConfig = link ? { serverUrl: link.origin, token: args.flags.token ?? link.token ?? config.token, instanceId: args.flags.instance ?? link.instanceId ?? config.instanceId } : config;
  const resolved = link ? await sessionIdOr(link.sessionId ?? null, attachConfig, CANNOT_ATTACH) : /^(wss?|https?):\/\//.test(target) ? target : await sessionIdOr(target, config, CANNOT_ATTACH);
  if (typeof resolved === 'number') return resolved;
  const label = args.flags.label ?? link?.label;
  return attachCommand(
    { target: resolved, observe: Boolean(args.flags.observe) || link?.observe === true, binary: Boolean(args.flags.binary), clipboard: Boolean(args.flags.clipboard), ...(label ? { label } : {}) },
    attachConfig,
  );
}

/** `attach`'s status when it cannot attach (attach.ts CONNECTION_FAILED, as ssh). */
const CANNOT_ATTACH = 255;

/**
 * The session a whole id, an id prefix or a label names (null: the default session); else the
 * problem reported and `failStatus`.
 */
async function sessionIdOr(given: string | null, config: ClientConfig, failStatus: number): Promise<string | number> {
  const api = new SessionsApi({ origin: config.serverUrl, instanceId: config.instanceId, token: config.token ?? null });
  try {
    const r = given === null ? await resolveDefaultSession(api) : await resolveSession(given, api);
    if ('id' in r) return r.id;
    process.stderr.write(`pty-ws: ${r.problem}\n`);
    return failStatus;
  } catch (e) {
    const unreachable = describeUnreachable(e, config.serverUrl);
    if (unreachable) process.stderr.write(`pty-ws: ${printable(unreachable)}\n`);
    else reportFailure(e, config.serverUrl);
    return failStatus;
  }
}

/** Runs a settings loader; a bad setting is reported on stderr and gives null (exit status 2). */
function configOrReport<T>(load: () => T): T | null {
  try {
    return load();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`pty-ws: ${e.message}\n`);
      return null;
    }
    throw e;
  }
}
