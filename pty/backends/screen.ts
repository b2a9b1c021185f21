// screen/managed: each session is a screen session `pw-<session id>` whose socket lives in a
// SCREENDIR private to this host, and node-pty runs a screen client attached to it. screen
// runs one server per session, forked from the client that creates it.

import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { IPty } from 'node-pty';
import type { PtyExit, SpawnSpec } from '../../src/ports/pty-host.ts';
import { childrenOf, endSession, isAlive } from './process-tree.ts';
import { PtyHostError } from '../wire/protocol.ts';
import type { SpawnTerminal } from './terminal-spawn.ts';
import { CLIENT_TERM, muxSessionName, sessionIdOf, spawnClient, untilFound, type Attached, type Backend, type Recovered } from './backend.ts';
import { run } from './exec.ts';
import { MAX_SOCKET_PATH, ensurePrivateDir, type MuxPaths } from './paths.ts';

const POLL_MS = 20;
/** How long a server whose client just left may take to go, before we call it detached. */
const EXIT_WAIT_MS = 1000;
/** The longest pid on Linux (pid_max is at most 2^22). */
const PID_DIGITS = 7;

/**
 * No command key (`escape ""`: every byte reaches the program, C-a d cannot detach us), no
 * startup message, no utmp record (whose failure would be shown on screen), no status line;
 * the alternate screen works as in a plain terminal; SCREENDIR stays out of the sessions.
 */
const RC = [
  '# Written by the pty-ws PTY host at each start.',
  'startup_message off',
  'deflogin off',
  'escape ""',
  'defutf8 on',
  'altscreen on',
  'vbell off',
  'msgwait 0',
  'hardstatus off',
  'unsetenv SCREENDIR',
  '',
].join('\n');

export class ScreenBackend implements Backend {
  readonly name = 'screen';
  readonly survivesHost = true;
  readonly #binary: string;
  readonly #paths: MuxPaths;

  readonly #spawn: SpawnTerminal;

  constructor(binary: string, paths: MuxPaths, spawn: SpawnTerminal) {
    this.#spawn = spawn;
    this.#binary = binary;
    this.#paths = paths;
    ensurePrivateDir(paths.dir);
    // screen itself refuses a SCREENDIR others can enter.
    ensurePrivateDir(paths.screenDir);
    writeFileSync(paths.screenRc, RC, { mode: 0o600 });
  }

  async start(spec: SpawnSpec, program: string): Promise<Attached> {
    const name = muxSessionName(spec.sessionId);
    if (!name) throw new PtyHostError('spawn_failed', `session id ${JSON.stringify(spec.sessionId)} is not usable as a screen session name`);
    if (Buffer.byteLength(path.join(this.#paths.screenDir, `${'9'.repeat(PID_DIGITS)}.${name}`)) > MAX_SOCKET_PATH) {
      throw new PtyHostError('spawn_failed', `screen's socket path for this session would exceed ${MAX_SOCKET_PATH} bytes (SCREENDIR ${this.#paths.screenDir})`);
    }
    if (this.#server(name)) throw new PtyHostError('exists', `screen session ${name} already exists`);
    // The creating client stays attached, so the program starts at the right size. The server
    // forks from it and passes its environment to the window: the session's own, with TERM set
    // by -T (the client's TERM is the router's emulator, which screen draws for).
    const pty = spawnClient(this.#spawn, this.#binary, ['-U', '-c', this.#paths.screenRc, '-T', spec.env.TERM ?? CLIENT_TERM, '-S', name, program, ...spec.argv.slice(1)], {
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.cwd,
      env: { ...spec.env, TERM: CLIENT_TERM, SCREENDIR: this.#paths.screenDir },
    });
    const found = await untilFound(pty, `screen creating session ${name}`, () => {
      const server = this.#server(name);
      return server ? childrenOf(server)[0] : undefined;
    });
    if ('exited' in found) return { pty, pid: pty.pid, cols: spec.cols, rows: spec.rows, exited: found.exited };
    return { pty, pid: found.value, cols: spec.cols, rows: spec.rows };
  }

  /** screen does not keep a window's exit status, so an ended session's is unknown. */
  async ended(sessionId: string): Promise<PtyExit | null> {
    const name = `pw-${sessionId}`;
    for (const deadline = Date.now() + EXIT_WAIT_MS; Date.now() < deadline; ) {
      if (!this.#server(name)) return { exitCode: null, signal: null };
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return null;
  }

  async reattach(sessionId: string): Promise<Attached> {
    const name = `pw-${sessionId}`;
    const server = this.#server(name);
    if (!server) throw new PtyHostError('spawn_failed', `screen session ${name} is gone`);
    const { cols, rows } = await this.#size(server);
    const pty = this.#client(['-x', `${server}.${name}`], cols, rows);
    return { pty, pid: childrenOf(server)[0] ?? server, cols, rows };
  }

  async kill(sessionId: string, pid: number, signal: NodeJS.Signals): Promise<void> {
    endSession(pid, signal);
    const name = `pw-${sessionId}`;
    const server = this.#server(name);
    if (server) await run(this.#binary, ['-S', `${server}.${name}`, '-X', 'quit'], { SCREENDIR: this.#paths.screenDir });
  }

  async recover(): Promise<Recovered[]> {
    const found: Recovered[] = [];
    for (const { server, name } of this.#sockets()) {
      const sessionId = sessionIdOf(name);
      if (!sessionId) continue;
      if (!isAlive(server)) {
        // A server that died without cleaning up; nothing of the session is left to attach to.
        rmSync(path.join(this.#paths.screenDir, `${server}.${name}`), { force: true });
        continue;
      }
      const attached = await this.reattach(sessionId).catch(() => undefined);
      if (attached) found.push({ sessionId, attached });
    }
    return found;
  }

  /** The window size of a detached session: `-Q info` answers "(x,y)/(cols,rows)+...". */
  async #size(server: number): Promise<{ cols: number; rows: number }> {
    const name = this.#sockets().find((s) => s.server === server)?.name ?? '';
    const r = await run(this.#binary, ['-S', `${server}.${name}`, '-Q', 'info'], { SCREENDIR: this.#paths.screenDir });
    const m = /\/\((\d+),(\d+)\)/.exec(r.stdout);
    return m ? { cols: Number(m[1]), rows: Number(m[2]) } : { cols: 80, rows: 24 };
  }

  #client(args: string[], cols: number, rows: number): IPty {
    return spawnClient(this.#spawn, this.#binary, ['-U', '-c', this.#paths.screenRc, ...args], { cols, rows, cwd: '/', env: { TERM: CLIENT_TERM, SCREENDIR: this.#paths.screenDir } });
  }

  /** The pid of the live server of a session, from its socket `<pid>.<name>`. */
  #server(name: string): number | undefined {
    return this.#sockets().find((s) => s.name === name && isAlive(s.server))?.server;
  }

  #sockets(): Array<{ server: number; name: string }> {
    let files: string[];
    try {
      files = readdirSync(this.#paths.screenDir);
    } catch {
      return [];
    }
    return files.flatMap((file) => {
      const m = /^(\d+)\.(.+)$/.exec(file);
      return m ? [{ server: Number(m[1]), name: m[2]! }] : [];
    });
  }
}
