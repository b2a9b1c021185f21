// The client commands of `pty-ws` (`attach`, `sessions`, `share`): flags checked, settings read, command run.
import { ConfigError, loadClientConfig, parseArgs } from '../../../config.ts';
import { attachCommand } from './attach.ts';
import { SESSIONS_USAGE, sessionsCommand } from './sessions.ts';
import { SHARE_BOOLEAN_FLAGS, SHARE_FLAGS, SHARE_USAGE, shareCommand } from './share.ts';

const ATTACH_FLAGS = ['token', 'url', 'instance', 'observe', 'binary', 'label'];
const SESSIONS_FLAGS = ['token', 'url', 'instance', 'json', 'all', 'command', 'label', 'cwd', 'cols', 'rows'];

/** `attach` and `sessions`: clients of a running server, configured by their own flags and env. */
export async function clientCommand(argv: string[], usage: string): Promise<number> {
  const args = parseArgs(argv, ['observe', 'binary', 'json', 'all', ...SHARE_BOOLEAN_FLAGS]);
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
    return shareCommand(args.positional[0], args.flags, config);
  }
  if (args.command === 'sessions') return sessionsCommand(args.positional[0], args.positional.slice(1), args.flags, config);
  const target = args.positional[0];
  if (args.help || !target) {
    process.stdout.write(usage);
    return args.help ? 0 : 2;
  }
  return attachCommand({ target, observe: Boolean(args.flags.observe), binary: Boolean(args.flags.binary), ...(args.flags.label ? { label: args.flags.label } : {}) }, config);
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
