// The PTY host: owns the node-pty processes, keyed by session id, and serves any number of
// router connections. Session events go to every connection.

import { closeSync, constants as fsConstants, openSync } from 'node:fs';
import type { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import { spawn as spawnPty, type IPty } from 'node-pty';
import type { Logger, PtyExit, PtySessionInfo, SpawnSpec } from '../src/ports.ts';
import { Connection } from './connection.ts';
import { preflight, sizeProblem } from './preflight.ts';
import { PROTOCOL_VERSION, PtyHostError, encodeFrame, type HostMessage, type Request } from './protocol.ts';

/** How often a paused host looks for sessions whose process is gone (see #resumeReaped). */
const REAP_POLL_MS = 20;

interface Session {
  readonly pty: IPty;
  readonly info: PtySessionInfo;
  /** See holdSlave. */
  readonly slaveFd: number | undefined;
  /** The process has been reaped, so its remaining output is bounded and is read even while paused. */
  reaped: boolean;
}

export class PtyHostServer {
  readonly #log: Logger;
  readonly #sessions = new Map<string, Session>();
  /** Ids whose spawn is between the duplicate check and the fork. */
  readonly #starting = new Set<string>();
  readonly #connections = new Set<Connection>();
  /** Connections whose socket buffer is full; while any is, every PTY is paused. */
  readonly #congested = new Set<Connection>();
  #reapPoll: ReturnType<typeof setInterval> | undefined;
  #nextConnectionId = 1;

  constructor(log: Logger) {
    this.#log = log;
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  accept(socket: Socket): void {
    const conn = new Connection(socket, this.#log.child({ conn: this.#nextConnectionId++ }), {
      onRequest: (c, req) => this.#handle(c, req),
      onCongestion: (c, congested) => this.#setCongested(c, congested),
      onClose: (c) => {
        this.#connections.delete(c);
        this.#setCongested(c, false);
        c.log.log('info', 'connection closed');
      },
    });
    this.#connections.add(conn);
    conn.log.log('info', 'connection accepted');
    conn.send(encodeFrame({ t: 'hello', protocol: PROTOCOL_VERSION, pid: process.pid }));
  }

  /** Hangs up every session and drops every connection. */
  shutdown(): void {
    for (const session of this.#sessions.values()) session.pty.kill('SIGHUP');
    for (const conn of this.#connections) conn.drop('host shutting down');
    this.#stopReapPoll();
  }

  #handle(conn: Connection, req: Request): void {
    switch (req.t) {
      case 'spawn':
        void this.#spawn(conn, req.rid, req.spec);
        return;
      case 'list':
        conn.send(encodeFrame({ t: 'listed', rid: req.rid, sessions: [...this.#sessions.values()].map((s) => ({ ...s.info })) }));
        return;
      case 'write':
        this.#session(conn, req.sessionId, 'write')?.pty.write(Buffer.from(req.data.buffer, req.data.byteOffset, req.data.byteLength));
        return;
      case 'resize':
        this.#resize(conn, req.sessionId, req.cols, req.rows);
        return;
      case 'kill':
        this.#kill(conn, req.sessionId, req.signal ?? 'SIGHUP');
        return;
    }
  }

  /** The live session, or undefined (logged) when it has exited or never existed. */
  #session(conn: Connection, sessionId: string, what: string): Session | undefined {
    const session = this.#sessions.get(sessionId);
    if (!session) conn.log.log('debug', `${what} for unknown session ignored`, { sessionId });
    return session;
  }

  async #spawn(conn: Connection, rid: number, spec: SpawnSpec): Promise<void> {
    let reply: HostMessage;
    try {
      reply = { t: 'spawned', rid, pid: await this.#start(spec) };
    } catch (err) {
      const failure = err instanceof PtyHostError ? err : new PtyHostError('spawn_failed', `spawn failed: ${String(err)}`);
      conn.log.log('warn', 'spawn refused', { sessionId: spec.sessionId, code: failure.code, reason: failure.message });
      reply = { t: 'failed', rid, code: failure.code, message: failure.message };
    }
    conn.send(encodeFrame(reply));
  }

  async #start(spec: SpawnSpec): Promise<number> {
    const { sessionId } = spec;
    if (this.#sessions.has(sessionId) || this.#starting.has(sessionId)) {
      throw new PtyHostError('exists', `session ${sessionId} already exists`);
    }
    this.#starting.add(sessionId);
    try {
      const file = await preflight(spec);
      const pty = spawnPty(file, spec.argv.slice(1), {
        // node-pty overwrites TERM with `name`, so a TERM the router chose must become the name.
        name: spec.env.TERM ?? 'xterm-256color',
        cols: spec.cols,
        rows: spec.rows,
        cwd: spec.cwd,
        env: spec.env,
        encoding: null,
      });
      this.#adopt(spec, pty);
      this.#log.log('info', 'session started', { sessionId, pid: pty.pid, program: file });
      return pty.pid;
    } finally {
      this.#starting.delete(sessionId);
    }
  }

  #adopt(spec: SpawnSpec, pty: IPty): void {
    const { sessionId } = spec;
    const session: Session = {
      pty,
      info: { sessionId, pid: pty.pid, cols: spec.cols, rows: spec.rows },
      slaveFd: this.#holdSlave(pty),
      reaped: false,
    };
    this.#sessions.set(sessionId, session);
    // With `encoding: null` node-pty emits Buffers, whatever its typings say.
    pty.onData(this.#guard('data', (chunk) => this.#broadcast({ t: 'data', sessionId, data: chunk as unknown as Buffer })));
    pty.onExit(this.#guard('exit', ({ exitCode, signal }) => this.#exited(session, exitCode, signal)));
    if (this.#congested.size > 0) {
      pty.pause();
      this.#startReapPoll();
    }
  }

  #exited(session: Session, exitCode: number, signal: number | undefined): void {
    const { sessionId } = session.info;
    if (this.#sessions.get(sessionId) !== session) return;
    this.#sessions.delete(sessionId);
    if (session.slaveFd !== undefined) closeSync(session.slaveFd);
    // A signalled process has no exit status; node-pty reports 0 for it.
    const exit: PtyExit = signal ? { exitCode: null, signal } : { exitCode, signal: null };
    this.#log.log('info', 'session exited', { sessionId, ...exit });
    this.#broadcast({ t: 'exit', sessionId, ...exit });
  }

  /**
   * Linux may end the master's read stream with output still unread once the last descriptor
   * of the slave side closes, so a program that prints a lot and exits loses its tail
   * (node-pty #72, #85). Holding a slave descriptor keeps that output readable; node-pty then
   * reports the exit through its fallback 200 ms after reaping instead of on EIO.
   */
  #holdSlave(pty: IPty): number | undefined {
    // A getter of node-pty's UnixTerminal that its typings leave out.
    const ptsName = (pty as IPty & { ptsName?: unknown }).ptsName;
    if (typeof ptsName !== 'string') {
      this.#log.log('warn', 'node-pty exposes no ptsName: fast-exiting sessions may lose output');
      return undefined;
    }
    try {
      // O_NOCTTY: a host started detached is a session leader and must not acquire a terminal.
      return openSync(ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY | fsConstants.O_NONBLOCK);
    } catch (err) {
      this.#log.log('warn', 'could not hold the PTY slave open', { err, ptsName });
      return undefined;
    }
  }

  #resize(conn: Connection, sessionId: string, cols: number, rows: number): void {
    const session = this.#session(conn, sessionId, 'resize');
    if (!session) return;
    const problem = sizeProblem(cols, rows);
    if (problem) {
      conn.log.log('warn', 'resize ignored', { sessionId, reason: problem });
      return;
    }
    try {
      session.pty.resize(cols, rows);
      session.info.cols = cols;
      session.info.rows = rows;
    } catch (err) {
      conn.log.log('warn', 'resize failed', { sessionId, err });
    }
  }

  #kill(conn: Connection, sessionId: string, signal: string): void {
    const session = this.#session(conn, sessionId, 'kill');
    if (!session) return;
    if (!Object.hasOwn(osConstants.signals, signal)) {
      conn.log.log('warn', 'kill with unknown signal ignored', { sessionId, signal });
      return;
    }
    session.pty.kill(signal);
  }

  #broadcast(msg: HostMessage): void {
    const frame = encodeFrame(msg);
    for (const conn of this.#connections) conn.send(frame);
  }

  #setCongested(conn: Connection, congested: boolean): void {
    const wasPaused = this.#congested.size > 0;
    if (congested) this.#congested.add(conn);
    else this.#congested.delete(conn);
    const paused = this.#congested.size > 0;
    if (paused === wasPaused) return;
    this.#log.log('debug', paused ? 'output paused' : 'output resumed');
    for (const session of this.#sessions.values()) {
      if (!paused) session.pty.resume();
      else if (!session.reaped) session.pty.pause();
    }
    if (paused) this.#startReapPoll();
    else this.#stopReapPoll();
  }

  #startReapPoll(): void {
    this.#reapPoll ??= setInterval(this.#guard('reap poll', () => this.#resumeReaped()), REAP_POLL_MS);
  }

  #stopReapPoll(): void {
    clearInterval(this.#reapPoll);
    this.#reapPoll = undefined;
  }

  /**
   * 200 ms after reaping a process node-pty destroys its read stream, and any output still
   * unread with it (see #holdSlave for why that is the usual way sessions end). A session
   * paused for backpressure would lose its last output that way, so once its process is gone
   * (no more output can come; what is left is bounded by the kernel buffer) it reads on.
   */
  #resumeReaped(): void {
    for (const session of this.#sessions.values()) {
      if (session.reaped || isAlive(session.info.pid)) continue;
      session.reaped = true;
      session.pty.resume();
    }
  }

  #guard<A extends unknown[]>(what: string, fn: (...args: A) => void): (...args: A) => void {
    return (...args) => {
      try {
        fn(...args);
      } catch (err) {
        this.#log.log('error', `${what} handler failed`, { err });
      }
    };
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
