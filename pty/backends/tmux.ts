// tmux/managed: each session is a tmux session `pw-<session id>` on a tmux server private to
// this host (`tmux -S <mux dir>/tmux`, started with an empty environment and our own config),
// and node-pty runs a tmux client attached to it.

import { accessSync, constants, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { IPty } from 'node-pty';
import type { PtyExit, SpawnSpec } from '../../src/ports/pty-host.ts';
import { endSession, procStat } from './process-tree.ts';
import { PtyHostError } from '../wire/protocol.ts';
import type { SpawnTerminal } from './terminal-spawn.ts';
import { closingExecArgv } from './session-launch.ts';
import { CLIENT_TERM, muxSessionName, sessionIdOf, spawnClient, untilFound, type Attached, type Backend, type Recovered } from './backend.ts';
import { run, shQuote, type RunResult } from './exec.ts';
import { ensurePrivateDir, type MuxPaths } from './paths.ts';

/**
 * The server's config. It never exits by itself (exit-empty off): a server that exits when its
 * last session ends takes the next session with it if that one is created in the same moment,
 * so the host starts the server (`start-server`, with an empty environment) and stops it when
 * it shuts down with no session left. No status line and no prefix key, so nothing tmux draws or intercepts
 * reaches the shared screen (a client typing C-b d must not detach the host's client). When a
 * program exits its pane stays dead just long enough for the hook to write its exit status
 * next to the socket (`<socket>.exit.<session>`) and end that session: all in a shell whose
 * output and status are thrown away, because tmux shows a failing hook command on whichever
 * client is attached (another session's, for one killed meanwhile).
 */
function config(binary: string, version: number): string {
  const hook = [
    "printf '%s %s' '#{pane_dead_status}' '#{pane_dead_signal}' > #{q:socket_path}.exit.#{session_name} 2>/dev/null",
    `'${binary}' -S #{q:socket_path} kill-session -t '=#{session_name}' >/dev/null 2>&1`,
    'exit 0',
  ].join('; ');
  return [
    '# Written by the pty-ws PTY host at each start: this server runs only pty-ws sessions.',
    'set -g exit-empty off',
    'set -g status off',
    'set -g prefix None',
    'set -g prefix2 None',
    'set -g escape-time 0',
    'set -g default-terminal xterm-256color',
    'set -as terminal-features ",xterm-256color:RGB"',
    'set -g remain-on-exit on',
    ...(version >= 303 ? ['set -g remain-on-exit-format ""'] : []),
    // A task's marks reach the host inside DCS passthrough (src/tasks/shell-command.ts); before
    // 3.3 tmux passed it through unconditionally. The program could write any byte to a native
    // session's client as well, so this opens nothing a native session does not.
    ...(version >= 303 ? ['set -g allow-passthrough on'] : []),
    `set-hook -g pane-died { run-shell -b "${hook}" }`,
    '',
  ].join('\n');
}

const STATUS_ATTEMPTS = 5;
const STATUS_POLL_MS = 40;
/** How often the programs of live sessions are checked for a missed SIGCHLD (see #nudge). */
const ZOMBIE_CHECK_MS = 500;

export class TmuxBackend implements Backend {
  readonly name = 'tmux';
  readonly survivesHost = true;
  readonly #binary: string;
  readonly #paths: MuxPaths;
  /** Creations one at a time: each sets the server-wide default-shell for its own first pane. */
  #creating: Promise<unknown> = Promise.resolve();
  /** Session id → its program's pid, for #nudge. */
  readonly #programs = new Map<string, number>();
  #zombieCheck: ReturnType<typeof setInterval> | undefined;

  /** `version` as parseTmuxVersion gives it (major * 100 + minor). */
  readonly #spawn: SpawnTerminal;

  /** The Perl that closes inherited descriptors (terminal-spawn.ts), if there is one. */
  readonly #fdCloser: string | undefined;

  constructor(binary: string, paths: MuxPaths, version: number, spawn: SpawnTerminal, fdCloser: string | undefined) {
    this.#spawn = spawn;
    this.#fdCloser = fdCloser;
    // The path goes into the hook's command line inside tmux's own double quotes.
    if (!/^[\w./+-]+$/.test(binary)) throw new Error(`tmux path ${binary} has characters the pane-died hook cannot quote`);
    this.#binary = binary;
    this.#paths = paths;
    ensurePrivateDir(paths.dir);
    writeFileSync(paths.tmuxConf, config(binary, version), { mode: 0o600 });
  }

  start(spec: SpawnSpec, program: string): Promise<Attached> {
    const name = muxSessionName(spec.sessionId);
    if (!name) return Promise.reject(new PtyHostError('spawn_failed', `session id ${JSON.stringify(spec.sessionId)} is not usable as a tmux session name`));
    const next = this.#creating.then(() => this.#create(name, spec, program));
    this.#creating = next.catch(() => undefined);
    return next;
  }

  /** The client's own exit says nothing about the program's: the pane-died hook's file does. */
  async ended(sessionId: string): Promise<PtyExit | null> {
    const name = `pw-${sessionId}`;
    if (await this.#exists(name)) return null;
    this.#unwatch(sessionId);
    // The hook writes the status before it ends the session; give a slow disk a moment anyway.
    for (let attempt = 0; attempt < STATUS_ATTEMPTS; attempt++) {
      const exit = this.#takeExitStatus(name);
      if (exit) return exit;
      await new Promise((resolve) => setTimeout(resolve, STATUS_POLL_MS));
    }
    // Killed by us (kill-session ends the pane without the hook) or by someone outside.
    return { exitCode: null, signal: null };
  }

  async reattach(sessionId: string): Promise<Attached> {
    const name = `pw-${sessionId}`;
    const r = await this.#tmux(['display-message', '-p', '-t', `=${name}:`, '#{pane_pid} #{window_width} #{window_height}']);
    const [pid, cols, rows] = r.stdout.trim().split(' ').map(Number);
    if (r.code !== 0 || !pid || !cols || !rows) throw new PtyHostError('spawn_failed', `tmux session ${name} is gone: ${r.stderr.trim()}`);
    this.#watch(sessionId, pid);
    return { pty: this.#attach(name, cols, rows), pid, cols, rows };
  }

  async kill(sessionId: string, pid: number, signal: NodeJS.Signals): Promise<void> {
    endSession(pid, signal);
    await this.#tmux(['kill-session', '-t', `=pw-${sessionId}`]);
  }

  async recover(): Promise<Recovered[]> {
    const found: Recovered[] = [];
    // tmux prints a tab as `_`, so the fields are split on a character session names cannot hold.
    const r = await this.#tmux(['list-sessions', '-F', '#{session_name}|#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}']);
    const live = new Set<string>();
    for (const line of r.code === 0 ? r.stdout.split('\n') : []) {
      const [name = '', dead, status, signal] = line.split('|');
      const sessionId = sessionIdOf(name);
      if (!sessionId) continue;
      live.add(sessionId);
      // Dead with a status: the hook has not finished, and what it would write is right here.
      // Dead without one: tmux has not reaped the program yet; attaching (and #nudge) lets the
      // hook run as usual.
      if (dead === '1' && (status || signal)) {
        await this.#tmux(['kill-session', '-t', `=${name}`]);
        found.push({ sessionId, exit: parseStatus(status ?? '', signal ?? '') });
        rmSync(`${this.#paths.tmuxSocket}.exit.${name}`, { force: true });
      } else {
        // One that ended in between shows up below through its exit status file.
        const attached = await this.reattach(sessionId).catch(() => undefined);
        if (attached) found.push({ sessionId, attached });
        else live.delete(sessionId);
      }
    }
    // Sessions that ended while no host was attached left their exit status behind.
    const prefix = `${path.basename(this.#paths.tmuxSocket)}.exit.`;
    for (const file of readdirSync(this.#paths.dir)) {
      const sessionId = file.startsWith(prefix) ? sessionIdOf(file.slice(prefix.length)) : undefined;
      if (!sessionId || live.has(sessionId)) continue;
      const exit = this.#takeExitStatus(`pw-${sessionId}`);
      if (exit) found.push({ sessionId, exit });
    }
    return found;
  }

  async stopIfIdle(): Promise<void> {
    const r = await this.#tmux(['list-sessions', '-F', '#{session_name}']);
    if (r.code === 0 && r.stdout.trim() === '') await this.#tmux(['kill-server']);
  }

  async #create(name: string, spec: SpawnSpec, program: string): Promise<Attached> {
    // The server outlives this host: started through the descriptor closer, it holds no PTY master
    // of a native session (which would keep that session's program running after a host crash).
    const started = await this.#tmux(['start-server'], this.#fdCloser);
    if (started.code !== 0) throw new PtyHostError('spawn_failed', `tmux server could not start: ${started.stderr.trim()}`);
    if (await this.#exists(name)) throw new PtyHostError('exists', `tmux session ${name} already exists`);
    // A single word would be run by the shell as a command line: exec it so argv stays exact.
    const command = spec.argv.length === 1 ? [`exec ${shQuote(program)}`] : [program, ...spec.argv.slice(1)];
    const env = Object.entries(spec.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    // The client creating the session is the one that stays attached, so the program runs at
    // the right size from its first instant and nothing it prints is missed.
    const pty = this.#client(
      ['set-option', '-g', 'default-shell', usableShell(spec.env.SHELL), ';', 'new-session', '-s', name, '-x', String(spec.cols), '-y', String(spec.rows), '-c', spec.cwd, ...env, '--', ...command],
      spec.cols,
      spec.rows,
    );
    const panePid = await untilFound(pty, `tmux creating session ${name}`, async () => {
      const r = await this.#tmux(['display-message', '-p', '-t', `=${name}:`, '#{pane_pid}']);
      const pid = Number(r.stdout.trim());
      return r.code === 0 && pid > 0 ? pid : undefined;
    });
    // A program that ended before we looked has left its status for ended() to find.
    if ('exited' in panePid) return { pty, pid: pty.pid, cols: spec.cols, rows: spec.rows, exited: panePid.exited };
    this.#watch(spec.sessionId, panePid.value);
    return { pty, pid: panePid.value, cols: spec.cols, rows: spec.rows };
  }

  #watch(sessionId: string, pid: number): void {
    this.#programs.set(sessionId, pid);
    this.#zombieCheck ??= setInterval(() => this.#nudge(), ZOMBIE_CHECK_MS).unref();
  }

  #unwatch(sessionId: string): void {
    this.#programs.delete(sessionId);
    if (this.#programs.size > 0) return;
    clearInterval(this.#zombieCheck);
    this.#zombieCheck = undefined;
  }

  /**
   * tmux before 3.5 can miss the SIGCHLD of a program that exits right after it starts (tmux
   * #311, #2679): the program stays a zombie, its pane is never declared dead, the hook never
   * runs and the session never ends. Another SIGCHLD to the server makes it reap.
   */
  #nudge(): void {
    for (const [sessionId, pid] of this.#programs) {
      const stat = procStat(pid);
      if (!stat) this.#unwatch(sessionId);
      else if (stat.state === 'Z' && stat.ppid > 1) signalQuietly(stat.ppid, 'SIGCHLD');
    }
  }

  #attach(name: string, cols: number, rows: number): IPty {
    return this.#client(['attach-session', '-t', `=${name}`], cols, rows);
  }

  /**
   * A tmux client on a PTY. Its environment is only its TERM (the router's emulator), and `-u`
   * makes it speak UTF-8 without a locale. The server was started with an empty environment, so
   * sessions get exactly their own variables through `-e`.
   */
  #client(args: string[], cols: number, rows: number): IPty {
    return spawnClient(this.#spawn, this.#binary, ['-u', '-S', this.#paths.tmuxSocket, '-f', this.#paths.tmuxConf, ...args], { cols, rows, cwd: '/', env: { TERM: CLIENT_TERM } });
  }

  async #exists(name: string): Promise<boolean> {
    return (await this.#tmux(['has-session', '-t', `=${name}`])).code === 0;
  }

  #tmux(args: string[], fdCloser?: string): Promise<RunResult> {
    const argv = ['-S', this.#paths.tmuxSocket, '-f', this.#paths.tmuxConf, ...args];
    if (!fdCloser) return run(this.#binary, argv);
    const [file, ...rest] = closingExecArgv(fdCloser, this.#binary, argv);
    return run(file!, rest);
  }

  /** Reads and removes the exit status the pane-died hook wrote, if it did. */
  #takeExitStatus(name: string): PtyExit | undefined {
    const file = `${this.#paths.tmuxSocket}.exit.${name}`;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
    rmSync(file, { force: true });
    // "<status> <signal>", either of them empty.
    const [status = '', signal = ''] = text.split(' ');
    return parseStatus(status, signal);
  }
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone meanwhile
  }
}

function parseStatus(status: string, signal: string): PtyExit {
  if (/^\d+$/.test(signal) && Number(signal) > 0) return { exitCode: null, signal: Number(signal) };
  return { exitCode: /^\d+$/.test(status) ? Number(status) : null, signal: null };
}

/** tmux refuses a default-shell that is not an absolute executable path; such a SHELL gets /bin/sh. */
function usableShell(shell: string | undefined): string {
  if (!shell || !path.isAbsolute(shell)) return '/bin/sh';
  try {
    accessSync(shell, constants.X_OK);
    return shell;
  } catch {
    return '/bin/sh';
  }
}
