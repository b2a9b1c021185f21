// `pty-ws token`: a new dev token for the state directory (src/auth/dev-token.ts). Only the
// token's hash is stored, so the old token cannot be shown again: this makes a new one, prints it
// once, and the old one stops working (a running server reads the new hash within a second).
import { resolve } from 'node:path';
import { rotateDevToken } from '../../../auth/dev-token.ts';
import { ConfigError, loadClientConfig, loadConfig, parseArgs, type ClientConfig } from '../../../core/config.ts';
import { SessionsApi } from '../../../client/sessions-api.ts';
import { printable } from './printable.ts';
import { reportFailure, reportUsage } from './report.ts';
import { jsonLogger } from '../../../services/logger.ts';
import { securePrivateState } from '../../../services/private-files.ts';
import { nodeDevTokenFile } from '../dev-token-file.ts';
import { nodeFileFacts } from '../file-facts.ts';
import { runningServerUrl } from '../server-address.ts';

export const TOKEN_USAGE = `usage: pty-ws token [--state-dir DIR]
       pty-ws token --host NAME [--url URL] [--token T] [--instance ID]

Makes a new dev token for the server on DIR (default ./.pty-ws, PTY_WS_STATE_DIR) and prints it
once, with the page URL of the server running on DIR (or, when none runs, of the configured
address). Only its hash is stored, so an earlier token cannot be shown again: this replaces it,
and the old token is refused from now on (a running server picks the new one up within a second;
connections already open stay). For PTY_WS_DEV_TOKEN_POLICY=keep, the default.

With --host: asks the server at URL (PTY_WS_URL; its bearer --token or PTY_WS_TOKEN, pty:admin)
for the credential of the remote PTY host NAME (scope pty:host, that name only) and prints it once;
it replaces an earlier one of that name. Give it to \`pty-ws host --connect URL --name NAME
--token-file FILE\` on the host's machine (docs/remote-hosts.md).
`;

export async function tokenCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args.help) {
    process.stdout.write(TOKEN_USAGE);
    return 0;
  }
  if (args.flags.host !== undefined) return hostTokenCommand(args.flags);
  try {
    const config = loadConfig(process.env, args.flags);
    const unused = !config.auth
      ? 'PTY_WS_AUTH=off: no token is needed'
      : config.tokensFile !== undefined || config.jwtSecret !== undefined || config.jwtPublicKey !== undefined || config.jwksUrl !== undefined
        ? 'bearers come from PTY_WS_TOKENS_FILE or JWT settings: the server makes no dev token'
        : config.devTokenPolicy === 'per-start'
          ? 'PTY_WS_DEV_TOKEN_POLICY=per-start: the server makes a new token at every start'
          : undefined;
    if (unused) {
      process.stderr.write(`pty-ws token: ${unused}\n`);
      return 2;
    }
    const logger = jsonLogger('warn', {}, { pretty: process.stderr.isTTY, write: (l) => void process.stderr.write(l) });
    securePrivateState({ stateDir: resolve(config.stateDir) }, nodeFileFacts, logger);
    const token = await rotateDevToken(nodeDevTokenFile(config.stateDir), { now: Date.now });
    const running = await runningServerUrl(config.stateDir);
    const origin = running ?? config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
    process.stdout.write(`dev token:   ${token}\nweb page:    ${origin}/#token=${token}\n`);
    process.stderr.write('(scope pty:control; printed once, only its hash is kept; the previous dev token is refused from now on)\n');
    if (!running) process.stderr.write(`(no pty-ws server runs on ${config.stateDir} now: the URL is the configured address, PTY_WS_HOST/PTY_WS_PORT)\n`);
    return 0;
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`pty-ws: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

/** `pty-ws token --host NAME`: a remote PTY host's credential, minted by the running server. */
async function hostTokenCommand(flags: Record<string, string>): Promise<number> {
  const { host: name, ...rest } = flags;
  const unknown = Object.keys(rest).filter((f) => !['url', 'token', 'instance'].includes(f));
  if (unknown.length) return reportUsage('token', `unknown flag ${unknown.map((f) => `--${f}`).join(', ')} with --host`, TOKEN_USAGE);
  let config: ClientConfig;
  try {
    config = loadClientConfig(process.env, rest);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`pty-ws: ${e.message}\n`);
    return 2;
  }
  try {
    const minted = await new SessionsApi({ origin: config.serverUrl, instanceId: config.instanceId, token: config.token ?? null }).mintHostToken(name!);
    process.stdout.write(`${printable(minted.token)}\n`);
    process.stderr.write(`(the credential of PTY host ${printable(minted.name)}, scope ${minted.scope}; printed once, only its hash is kept; an earlier one of that name is refused from now on)\n`);
    return 0;
  } catch (e) {
    return reportFailure(e, config.serverUrl);
  }
}
