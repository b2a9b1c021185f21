// `deno task start`: the pty-ws router on Deno. Commands: start (router + default session, as
// `npm start`), serve (router only). The PTY host stays a Node process (`npm run pty-host`).
import { banner } from '../../router/banner.ts';
import { ConfigError, loadConfig, parseArgs, settingsHelp, type Config } from '../../core/config.ts';
import { writeAll } from './io.ts';
import type { ServedRouter } from '../../router/router.ts';
import { startServer } from './server.ts';

const USAGE = `usage: deno task start [--flag value ...]
       deno run <permissions> src/adapter/deno/main.ts <command> [--flag value ...]

commands:
  start       run the router with a default session (on tmux when installed), print its URLs and a dev token
  serve       run the router only

The PTY host is the Node process of \`npm run pty-host\`; the router starts one when none listens.

settings (each env var also has the --flag shown):
${settingsHelp()}
`;

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args.help || !args.command) {
    writeAll(Deno.stdout, USAGE);
    return args.command || args.help ? 0 : 2;
  }
  if (args.command !== 'start' && args.command !== 'serve') {
    writeAll(Deno.stderr, `pty-ws: unknown command "${args.command}"\n\n${USAGE}`);
    return 2;
  }

  let config: Config;
  let server: ServedRouter;
  try {
    config = loadConfig(Deno.env.toObject(), args.flags);
    server = await startServer(config, {
      createDefaultSession: args.command === 'start',
      onFatal: (e) => {
        writeAll(Deno.stderr, `pty-ws: ${e.message}\n`);
        Deno.exit(1);
      },
    });
  } catch (e) {
    if (e instanceof ConfigError) {
      writeAll(Deno.stderr, `pty-ws: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  writeAll(Deno.stdout, banner(server, config));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      writeAll(Deno.stderr, `pty-ws: second ${signal}, exiting now\n`);
      Deno.exit(1);
    }
    stopping = true;
    writeAll(Deno.stderr, `pty-ws: ${signal}: shutting down\n`);
    Deno.unrefTimer(setTimeout(() => Deno.exit(1), 10_000));
    server.close().then(
      () => Deno.exit(0),
      (e: unknown) => {
        writeAll(Deno.stderr, `pty-ws: shutdown failed: ${String(e)}\n`);
        Deno.exit(1);
      },
    );
  };
  Deno.addSignalListener('SIGINT', () => stop('SIGINT'));
  Deno.addSignalListener('SIGTERM', () => stop('SIGTERM'));
  // SIGHUP re-reads the token map; without one it keeps its default meaning (the terminal went away: exit).
  if (config.tokensFile !== undefined) Deno.addSignalListener('SIGHUP', () => void server.reloadTokens());
  return -1;
}

main(Deno.args).then(
  (code) => {
    if (code >= 0) Deno.exit(code);
  },
  (e: unknown) => {
    writeAll(Deno.stderr, `pty-ws: ${e instanceof Error ? e.message : String(e)}\n`);
    Deno.exit(1);
  },
);
