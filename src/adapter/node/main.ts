// The `pty-ws` command line: start (router + default session), serve (router), pty-host.
import { banner } from '../../banner.ts';
import { ConfigError, loadConfig, parseArgs, settingsHelp, type Config } from '../../config.ts';
import { startServer, type RunningServer } from './server.ts';
import { clientCommand } from './cli/client-commands.ts';

const USAGE = `usage: pty-ws <command> [--flag value ...]

commands:
  start       run the router with a default native session, print its URLs and a dev token (npm start)
  serve       run the router only
  pty-host    run the PTY host process on its own (--socket <path>)
  attach <attach-url | session-id> [--token T] [--observe] [--binary] [--label L]
              attach this terminal to a session (detach: Ctrl-] then d); the token may come
              from PTY_WS_TOKEN; exits with the session process's exit status
  sessions list|create|delete
              the REST control plane (pty-ws sessions --help)
  share <session-id> [--control] [--expires 2h] [--label L] | --list | --revoke ID
              share links: a page URL that watches (or, with --control, types in) one session

settings (each env var also has the --flag shown):
${settingsHelp()}
`;

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args.help || !args.command) {
    process.stdout.write(USAGE);
    return args.command || args.help ? 0 : 2;
  }
  if (args.command === 'pty-host') {
    // The host parses its own flags from process.argv.
    process.argv.splice(2, 1);
    await import('../../../pty/main.ts');
    return -1;
  }
  if (args.command === 'attach' || args.command === 'sessions' || args.command === 'share') return clientCommand(argv, USAGE);
  if (args.command !== 'start' && args.command !== 'serve') {
    process.stderr.write(`pty-ws: unknown command "${args.command}"\n\n${USAGE}`);
    return 2;
  }

  let config: Config;
  let server: RunningServer;
  try {
    config = loadConfig(process.env, args.flags);
    // Settings that are each valid but unusable together (or files that are broken) surface here.
    server = await startServer(config, { createDefaultSession: args.command === 'start' });
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`pty-ws: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  process.stdout.write(banner(server, config));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      process.stderr.write(`pty-ws: second ${signal}, exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`pty-ws: ${signal}: shutting down\n`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    server.close().then(
      () => process.exit(0),
      (e: unknown) => {
        process.stderr.write(`pty-ws: shutdown failed: ${String(e)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // SIGHUP re-reads the token map; without one it keeps its default meaning (the terminal went away: exit).
  if (config.tokensFile !== undefined) process.on('SIGHUP', () => void server.reloadTokens());
  return -1;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e: unknown) => {
    process.stderr.write(`pty-ws: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
