// tmux/managed: each session is a tmux session `pw-<session id>` on a tmux server private to
// this host (`tmux -S <mux dir>/tmux`, started with an empty environment and our own config),
// and node-pty runs a tmux client attached to it.

import { accessSync, constants, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn as spawnPty, type IPty } from 'node-pty';
import type { PtyExit, SpawnSpec } from '../../src/ports.ts';
import { endSession } from '../process-tree.ts';
import { PtyHostError } from '../protocol.ts';
import { CLIENT_TERM, muxSessionName, sessionIdOf, type Attached, type Backend, type Recovered } from './backend.ts';
import { run, shQuote, type RunResult } from './exec.ts';
import { ensurePrivateDir, type MuxPaths } from './paths.ts';

/** How long a new session may take to show up on the server. */
const CREATE_TIMEOUT_MS = 5000;
const POLL_MS = 20;

/**
 * The server's config. No status line and no prefix key, so nothing tmux draws or intercepts
 * reaches the shared screen (a client typing C-b d must not detach the host's client). When a
 * program exits its pane stays dead just long enough for the hook to write its exit status
 * next to the socket (`<socket>.exit.<session>`), then the session goes.
 */
function config(version: number): string {
  // version: major * 100 + minor
  return [
    '# Written by the pty-ws PTY host at each start: this server runs only pty-ws sessions.',
    'set -g status off',
    'set -g prefix None',
    'set -g prefix2 None',
    'set -g escape-time 0',
    'set -g default-terminal xterm-256color',
    'set -as terminal-features ",xterm-256color:RGB"',
    'set -g remain-on-exit on',
    ...(version >= 303 ? ['set -g remain-on-exit-format ""'] : []),
    'set-hook -g pane-died \'run-shell "printf \\"%s %s\\" \\"#{pane_dead_status}\\" \\"#{pane_dead_signal}\\" > #{q:socket_path}.exit.#{session_name}" ; kill-session\'',
    '',
  ].join('\n');
}

export class TmuxBackend implements Backend {
  readonly name = 'tmux';
  readonly survivesHost = true;
  readonly #binary: string;
  readonly #paths: MuxPaths;
  /** Creations one at a time: each sets the server-wide default-shell for its own first pane. */
  #creating: Promise<unknown> = Promise.resolve();

  constructor(binary: string, paths: MuxPaths, version: number) {
    this.#binary = binary;
    this.#paths = paths;
    ensurePrivateDir(paths.dir);
    writeFileSync(paths.tmuxConf, config(version), { mode: 0o600 });
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
    return this.#takeExitStatus(name) ?? { exitCode: null, signal: null };
  }

  async reattach(sessionId: string): Promise<Attached> {
    const name = `pw-${sessionId}`;
    const r = await this.#tmux(['display-message', '-p', '-t', `=${name}:`, '#{pane_pid} #{window_width} #{window_height}']);
    const [pid, cols, rows] = r.stdout.trim().split(' ').map(Number);
    if (r.code !== 0 || !pid || !cols || !rows) throw new PtyHostError('spawn_failed', `tmux session ${name} is gone: ${r.stderr.trim()}`);
    return { pty: this.#attach(name, cols, rows), pid, cols, rows };
  }

  async kill(sessionId: string, pid: number, signal: NodeJS.Signals): Promise<void> {
    endSession(pid, signal);
    await this.#tmux(['kill-session', '-t', `=pw-${sessionId}`]);
  }

  async recover(): Promise<Recovered[]> {
    const found: Recovered[] = [];
    const r = await this.#tmux(['list-sessions', '-F', '#{session_name}\t#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}']);
    const live = new Set<string>();
    for (const line of r.code === 0 ? r.stdout.split('\n') : []) {
      const [name = '', dead, status, signal] = line.split('\t');
      const sessionId = sessionIdOf(name);
      if (!sessionId) continue;
      live.add(sessionId);
      if (dead === '1') {
        // Its program died while the hook could not finish (e.g. the server was busy stopping).
        await this.#tmux(['kill-session', '-t', `=${name}`]);
        found.push({ sessionId, exit: parseStatus(status ?? '', signal ?? '') });
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

  async #create(name: string, spec: SpawnSpec, program: string): Promise<Attached> {
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
    const pid = await this.#panePid(name, pty);
    return { pty, pid, cols: spec.cols, rows: spec.rows };
  }

  /** The program's pid once the session exists; the client's own if the session was over before we looked. */
  async #panePid(name: string, client: IPty): Promise<number> {
    let exited = false;
    const sub = client.onExit(() => (exited = true));
    try {
      for (const deadline = Date.now() + CREATE_TIMEOUT_MS; Date.now() < deadline && !exited; ) {
        const r = await this.#tmux(['display-message', '-p', '-t', `=${name}:`, '#{pane_pid}']);
        const pid = Number(r.stdout.trim());
        if (r.code === 0 && pid > 0) return pid;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      if (exited) return client.pid;
      client.kill('SIGKILL');
      throw new PtyHostError('spawn_failed', `tmux did not create session ${name} within ${CREATE_TIMEOUT_MS} ms`);
    } finally {
      sub.dispose();
    }
  }

  #attach(name: string, cols: number, rows: number): IPty {
    return this.#client(['attach-session', '-t', `=${name}`], cols, rows);
  }

  /**
   * A tmux client on a PTY. Its environment is only its TERM (the router's emulator), and `-u`
   * makes it speak UTF-8 without a locale. The first client also starts the server, whose
   * environment is therefore empty: sessions get exactly their own variables through `-e`.
   */
  #client(args: string[], cols: number, rows: number): IPty {
    return spawnPty(this.#binary, ['-u', '-S', this.#paths.tmuxSocket, '-f', this.#paths.tmuxConf, ...args], {
      name: CLIENT_TERM,
      cols,
      rows,
      cwd: '/',
      env: { TERM: CLIENT_TERM },
      encoding: null,
    });
  }

  async #exists(name: string): Promise<boolean> {
    return (await this.#tmux(['has-session', '-t', `=${name}`])).code === 0;
  }

  #tmux(args: string[]): Promise<RunResult> {
    return run(this.#binary, ['-S', this.#paths.tmuxSocket, '-f', this.#paths.tmuxConf, ...args]);
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
    const [status = '', signal = ''] = text.trim().split(' ');
    return parseStatus(status, signal);
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
