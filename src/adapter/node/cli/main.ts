// The `pty-ws` command line: a table of commands (start, serve, pty-host, attach, sessions, share, nginx-config), each
// with its help entry; `pty-ws --help` lists them all and `pty-ws --version` prints the package's.
import path from 'node:path';
import { readFileSync } from 'node:fs';
import pkg from '../../../../package.json' with { type: 'json' };
import { readPtyHostConfig, type PtyHostConfig } from '../../../../pty/wire/host-config.ts';
import { banner } from '../../../router/banner.ts';
import { ConfigError, loadConfig, parseArgs, settingsHelp, type Config } from '../../../core/config.ts';
import { startServer, type RunningServer } from '../server.ts';
import { clientCommand } from './client-commands.ts';
import { nginxConfigCommand } from './nginx-config.ts';
import { tokenCommand } from './token.ts';

interface Command {
  /** The command with its arguments, as --help shows it. */
  synopsis: string;
  /** What it does, one string per help line. */
  help: string[];
  /** The exit status, or -1 while it keeps running (a server). */
  run(argv: string[]): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  start: {
    synopsis: 'start',
    help: ['run the router with a default session (on tmux when installed), print its URLs and a dev token (npm start)'],
    run: (argv) => runServer(argv, true),
  },
  serve: { synopsis: 'serve', help: ['run the router only'], run: (argv) => runServer(argv, false) },
  'pty-host': {
    synopsis: 'pty-host',
    help: ['run the PTY host process on its own (--socket <path>), with only the settings it uses'],
    run: runPtyHostCommand,
  },
  host: {
    synopsis: 'host --connect <router URL> --name <name> --token-file <file> [--allow-command <argv pattern>]... [--backends native,tmux]',
    help: [
      'a PTY host on this machine that dials in to the router (wss://, or ws:// to loopback) and',
      'links again with backoff whenever the link is lost; its credential: pty-ws token --host <name>.',
      'It runs only what its own policy allows: --allow-command (repeatable; "/abs/program arg" exactly,',
      'a last * for any further arguments; default: the login shell), the backends it offers',
      '(--backends), as --session-user, in --sandbox bwrap.',
      'Without --connect: the local PTY host, as pty-host (docs/remote-hosts.md)',
    ],
    run: runPtyHostCommand,
  },
  attach: {
    synopsis: 'attach <attach-url | page-url | session> [--token T] [--observe] [--binary] [--clipboard] [--label L]',
    help: [
      'attach this terminal to a session (detach: Ctrl-] then d; Ctrl-] c take control);',
      'a session is an id, a unique prefix of one, or a label; a page-url is the web page URL',
      "of start or a share link (its token, session and watch flag); the token may come from",
      "PTY_WS_TOKEN; exits with the session process's exit status; --clipboard lets the",
      "session's programs set your clipboard (OSC 52) through your terminal",
    ],
    run: (argv) => clientCommand(argv, usage()),
  },
  sessions: {
    synopsis: 'sessions list|create|delete',
    help: ['the REST control plane (pty-ws sessions --help)'],
    run: (argv) => clientCommand(argv, usage()),
  },
  token: {
    synopsis: 'token [--state-dir DIR] | token --host NAME [--url U --token T]',
    help: [
      'a new dev token for the server on DIR, printed once (the old one stops working);',
      "--host: a remote PTY host's credential (scope pty:host) from the running server (pty:admin)",
    ],
    run: tokenCommand,
  },
  share: {
    synopsis: 'share <session> [--control] [--expires 2h] [--label L] | --list | --revoke ID; share --revoke-all [--principal P]',
    help: ['share links: a page URL that watches (or, with --control, types in) one session'],
    run: (argv) => clientCommand(argv, usage()),
  },
  'nginx-config': {
    synopsis: 'nginx-config [--listen L] [--standalone --prefix DIR] <instance_id>=<host:port> ...',
    help: ["print the nginx front door of a fleet: /agents/{instance_id}/ to its owner (docs/deployment.md)"],
    run: async (argv) => nginxConfigCommand(argv.slice(1)),
  },
};

function usage(): string {
  const entry = ({ synopsis, help }: Command) => {
    const indent = ' '.repeat(14);
    const first = synopsis.length < 12 ? `  ${synopsis.padEnd(12)}${help[0]}` : `  ${synopsis}\n${indent}${help[0]}`;
    return [first, ...help.slice(1).map((line) => `${indent}${line}`)].join('\n');
  };
  return `usage: pty-ws <command> [--flag value ...]
       pty-ws --version

commands:
${Object.values(COMMANDS).map(entry).join('\n')}

settings (each env var also has the --flag shown):
${settingsHelp()}
`;
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-v') {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const args = parseArgs(argv);
  if (!args.command) return printUsage(args.help);
  const command = Object.hasOwn(COMMANDS, args.command) ? COMMANDS[args.command] : undefined;
  if (!command) {
    process.stderr.write(`pty-ws: unknown command "${args.command}"\n\n${usage()}`);
    return 2;
  }
  // Each command answers its own --help (`sessions` has a usage of its own).
  return command.run(argv);
}

function printUsage(asked: boolean): number {
  process.stdout.write(usage());
  return asked ? 0 : 2;
}

/** `pty-host`: the PTY host with the settings it reads itself (pty/wire/host-config.ts), until a signal ends it. */
/** `pty-host` and `host`: the PTY host process, on its local socket or dialing in to a router (`--connect`). */
async function runPtyHostCommand(argv: string[]): Promise<number> {
  if (parseArgs(argv).help) return printUsage(true);
  let config: PtyHostConfig;
  try {
    config = readPtyHostConfig(argv, process.env, (p) => path.resolve(p), (file) => readFileSync(file, 'utf8'));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`pty-ws: ${e.message}\n`);
    return 2;
  }
  // Loaded only for this command: the host's modules (node-pty among them) are not the client commands'.
  const { runPtyHost } = await import('../pty-host-run.ts');
  await runPtyHost(config);
  return -1;
}

/** `start` and `serve`: the router (with a default session for `start`) until SIGINT or SIGTERM. */
async function runServer(argv: string[], createDefaultSession: boolean): Promise<number> {
  const args = parseArgs(argv);
  if (args.help) return printUsage(true);
  let config: Config;
  let server: RunningServer;
  try {
    config = loadConfig(process.env, args.flags);
    // Settings that are each valid but unusable together (or files that are broken) surface here.
    server = await startServer(config, {
      createDefaultSession,
      onFatal: (e) => {
        process.stderr.write(`pty-ws: ${e.message}\n`);
        process.exit(1);
      },
    });
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
