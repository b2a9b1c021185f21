// The PTY host: owns the sessions (keyed by session id, each run by a backend) and serves any
// number of router connections. Their events travel through an EventStream, which never
// drops one and says when every PTY must pause.

import { closeSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { constants as osConstants } from 'node:os';
import type { HopTrace } from '../src/ports/hop-trace.ts';
import type { Logger } from '../src/ports/logger.ts';
import type { PtyExit, SpawnSpec } from '../src/ports/pty-host.ts';
import type { IPty } from 'node-pty';
import type { Attached, Backend } from './backends/backend.ts';
import { Connection } from './connection.ts';
import { mayReattach, type Session } from './host-session.ts';
import { holdSlave } from './slave-hold.ts';
import { ptyInput, type PtyInput } from './pty-input.ts';
import { EventStream } from './event-stream.ts';
import type { Confinement } from './confine.ts';
import { preflight, sizeProblem } from './preflight.ts';
import { checkSpawn, type HostPolicy } from './host-policy.ts';
import { isAlive, signalSession } from './backends/process-tree.ts';
import { HOST_FEATURES, PROTOCOL_VERSION, PtyHostError, encodeFrame, type HostMessage, type Request } from './wire/protocol.ts';

/** The router that started a host: its state directory, and the host's own stop (as on SIGTERM). */
export interface HostOwner {
  stateDir: string;
  stop(): void;
}

/** How often a paused host looks for sessions whose process is gone (see #resumeReaped). */
const REAP_POLL_MS = 20;
export class PtyHostServer {
  readonly #log: Logger;
  readonly #backends: ReadonlyMap<string, Backend>;
  readonly #sessions = new Map<string, Session>();
  /** Ids whose spawn is between the duplicate check and the fork. */
  readonly #starting = new Set<string>();
  readonly #connections = new Set<Connection>();
  readonly #events: EventStream;
  #reapPoll: ReturnType<typeof setInterval> | undefined;
  #nextConnectionId = 1;

  readonly #confinement: Confinement;
  /** This host process's id for its event numbers (docs/protocol.md §3.4). */
  readonly epoch = crypto.randomUUID();

  /** The echo path's hop trace (src/adapter/node/hop-trace.ts): undefined unless it is on. */
  readonly #trace: HopTrace | undefined;

  /** The router that started this host (src/adapter/node/pty-host-main.ts `--started-by`): named in `hello`, it may ask the host to stop. */
  readonly #owner: HostOwner | undefined;

  /** A remote host's own policy (pty/host-policy.ts): undefined for the local host, which runs what its router asks. */
  readonly #policy: HostPolicy | undefined;

  constructor(log: Logger, backends: readonly Backend[], confinement: Confinement, trace?: HopTrace, owner?: HostOwner, policy?: HostPolicy) {
    this.#log = log;
    this.#policy = policy;
    this.#owner = owner;
    this.#trace = trace;
    this.#confinement = confinement;
    this.#backends = new Map(backends.map((b) => [b.name, b]));
    this.#events = new EventStream(log, (sessionId) => this.#applyFlow(sessionId), this.epoch);
  }

  get backendNames(): string[] {
    return [...this.#backends.keys()];
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  /** Takes over the sessions an earlier host left in the multiplexers. Call before accepting connections. */
  async recover(): Promise<void> {
    for (const backend of this.#backends.values()) {
      for (const found of await backend.recover()) {
        if ('attached' in found) {
          this.#adopt(found.sessionId, backend, found.attached);
          this.#log.log('info', 'session re-attached', { sessionId: found.sessionId, backend: backend.name, pid: found.attached.pid });
        } else {
          this.#log.log('info', 'session ended while no host ran', { sessionId: found.sessionId, backend: backend.name, ...found.exit });
          this.#events.exit({ sessionId: found.sessionId, backend: backend.name, pid: 0, cols: 0, rows: 0 }, found.exit);
        }
      }
    }
  }

  /** A router's connection: the local socket, or a remote host's link (pty/dial-out.ts). */
  accept(socket: Duplex): void {
    const conn = new Connection(socket, this.#log.child({ conn: this.#nextConnectionId++ }), {
      onRequest: (c, req) => this.#handle(c, req),
      onCongestion: (c, congested) => this.#events.congestion(c, congested),
      onClose: (c) => {
        this.#connections.delete(c);
        this.#events.closed(c);
        c.log.log('info', 'connection closed');
      },
    }, this.#trace);
    this.#connections.add(conn);
    conn.log.log('info', 'connection accepted');
    const startedBy = this.#owner ? { startedBy: this.#owner.stateDir } : {};
    const shell = this.#policy?.defaultShell === undefined ? {} : { shell: this.#policy.defaultShell };
    conn.send(encodeFrame({ t: 'hello', protocol: PROTOCOL_VERSION, pid: process.pid, epoch: this.epoch, backends: this.backendNames, confinement: this.#confinement.report, features: [...HOST_FEATURES], ...startedBy, ...shell }));
  }

  /**
   * Hangs up every native session and drops every connection. Multiplexer sessions live on:
   * only their clients go, and the next host attaches again. A multiplexer left with no
   * session is stopped.
   */
  async shutdown(): Promise<void> {
    for (const session of this.#sessions.values()) {
      if (session.backend.survivesHost) session.pty.kill('SIGHUP');
      else signalSession(session.info.pid, 'SIGHUP');
    }
    for (const conn of this.#connections) conn.drop('host shutting down');
    this.#events.stop();
    this.#stopReapPoll();
    for (const backend of this.#backends.values()) {
      await backend.stopIfIdle?.().catch((err: unknown) => this.#log.log('warn', `could not stop the idle ${backend.name} server`, { err }));
    }
  }

  #handle(conn: Connection, req: Request): void {
    switch (req.t) {
      case 'spawn':
        void this.#spawn(conn, req.rid, req.spec);
        return;
      case 'list':
        conn.send(encodeFrame({ t: 'listed', rid: req.rid, sessions: [...[...this.#sessions.values()].map((s) => ({ ...s.info })), ...this.#events.unreported] }));
        return;
      case 'events':
        this.#events.subscribe(conn, req.resume, req.binaryData === true, req.credit === true);
        return;
      case 'ack':
        this.#events.ack(req.sessionId, req.n);
        return;
      case 'credit':
        this.#events.credit(conn, req.sessionId, req.bytes);
        return;
      case 'write':
        this.#write(conn, req.sessionId, req.data, req.wid);
        return;
      case 'resize': {
        const error = this.#resize(conn, req.sessionId, req.cols, req.rows);
        if (req.rid !== undefined) conn.send(encodeFrame(error === undefined ? { t: 'resized', rid: req.rid } : { t: 'resized', rid: req.rid, error }));
        return;
      }
      case 'kill':
        this.#kill(conn, req.sessionId, req.signal ?? 'SIGHUP');
        return;
      case 'shutdown':
        // A host started on its own is its operator's to stop, never a router's.
        if (!this.#owner) return conn.log.log('warn', 'shutdown request ignored: no router started this host');
        conn.log.log('info', 'shutdown requested by the router');
        this.#owner.stop();
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
      conn.log.log('warn', 'spawn refused', { sessionId: spec.sessionId, backend: spec.backend, code: failure.code, reason: failure.message, ...(failure === err ? {} : { error: err }) });
      reply = { t: 'failed', rid, code: failure.code, message: failure.message };
    }
    conn.send(encodeFrame(reply));
  }

  async #start(spec: SpawnSpec): Promise<number> {
    const { sessionId } = spec;
    const backend = this.#backends.get(spec.backend);
    if (!backend) {
      throw new PtyHostError('backend_unavailable', `backend "${spec.backend}" is not available on this PTY host (it runs: ${this.backendNames.join(', ')})`);
    }
    // Before anything of the spec is looked at on this machine (preflight resolves the program).
    if (this.#policy) checkSpawn(this.#policy, spec);
    if (this.#sessions.has(sessionId) || this.#starting.has(sessionId) || this.#events.isUnreported(sessionId)) {
      throw new PtyHostError('exists', `session ${sessionId} already exists`);
    }
    this.#starting.add(sessionId);
    try {
      const confined = this.#confinement.apply(spec, await preflight(spec));
      // Checked again as it will really run: the wrapper exists, the (maybe new) cwd too.
      const program = confined.spec === spec ? confined.program : await preflight(confined.spec);
      const attached = await backend.start(confined.spec, program);
      this.#adopt(sessionId, backend, attached);
      this.#log.log('info', 'session started', { sessionId, backend: backend.name, pid: attached.pid, program });
      return attached.pid;
    } finally {
      this.#starting.delete(sessionId);
    }
  }

  #adopt(sessionId: string, backend: Backend, attached: Attached): void {
    const session: Session = {
      backend,
      info: { sessionId, backend: backend.name, pid: attached.pid, cols: attached.cols, rows: attached.rows },
      pty: attached.pty,
      input: this.#inputOf(sessionId, attached.pty),
      slaveFd: attached.exited ? undefined : holdSlave(attached.pty, this.#log),
      reaped: false,
      killed: false,
      attachedAt: Date.now(),
      reattaches: 0,
    };
    this.#sessions.set(sessionId, session);
    this.#wire(session);
    if (attached.exited) void this.#ended(session, attached.exited);
  }

  #wire(session: Session): void {
    const { pty } = session;
    const { sessionId } = session.info;
    const current = () => this.#sessions.get(sessionId) === session && session.pty === pty;
    const trace = this.#trace;
    // Before the output is handled: the time node-pty read it.
    if (trace) pty.onData(() => trace('host.pty_read'));
    // With `encoding: null` node-pty emits Buffers, whatever its typings say.
    pty.onData(this.#guard('data', (chunk) => current() && this.#events.output(sessionId, chunk as unknown as Buffer)));
    pty.onExit(
      this.#guard('exit', ({ exitCode, signal }) => {
        if (!current()) return;
        // A signalled process has no exit status; node-pty reports 0 for it.
        void this.#ended(session, signal ? { exitCode: null, signal } : { exitCode, signal: null });
      }),
    );
    // Multiplexer clients start paused (see spawnClient): they read once wired, unless paused here.
    this.#flow(session);
    if (this.#events.sessionPaused(sessionId)) this.#startReapPoll();
  }

  /** The session's PTY ended: the program exited, or a multiplexer client left (attach again, or the session is over). */
  async #ended(session: Session, ptyExit: PtyExit): Promise<void> {
    const { sessionId } = session.info;
    session.input.close();
    if (session.slaveFd !== undefined) closeSync(session.slaveFd);
    session.slaveFd = undefined;
    let exit = await session.backend.ended(sessionId, ptyExit).catch((err: unknown) => {
      this.#log.log('error', 'could not tell how a session ended', { sessionId, err });
      return { exitCode: null, signal: null };
    });
    if (exit === null && !session.killed && mayReattach(session)) {
      try {
        const attached = await session.backend.reattach(sessionId);
        session.input.close();
        Object.assign(session, { pty: attached.pty, input: this.#inputOf(sessionId, attached.pty), slaveFd: holdSlave(attached.pty, this.#log), reaped: false, attachedAt: Date.now() });
        Object.assign(session.info, { cols: attached.cols, rows: attached.rows });
        session.reattaches++;
        this.#wire(session);
        if (attached.exited) void this.#ended(session, attached.exited);
        this.#log.log('warn', 'multiplexer client was detached; attached again', { sessionId });
        return;
      } catch (err) {
        this.#log.log('error', 'could not attach to the session again', { sessionId, err });
      }
    }
    if (exit === null) {
      // The multiplexer still holds it but we cannot reach it: end it rather than orphan it.
      await session.backend.kill(sessionId, session.info.pid, 'SIGHUP').catch(() => undefined);
      exit = { exitCode: null, signal: null };
    }
    if (this.#sessions.get(sessionId) !== session) return;
    this.#sessions.delete(sessionId);
    this.#log.log('info', 'session exited', { sessionId, ...exit });
    this.#events.exit(session.info, exit);
  }

  /**
   * Why a session's PTY cannot take input or a size now, or undefined when it can: gone from the
   * host, or its process (a multiplexer's client) already reaped, so nobody would ever read it.
   */
  #unwritable(session: Session | undefined): string | undefined {
    if (!session) return 'the session is not running on the PTY host (it has ended)';
    if (session.reaped || !isAlive(session.pty.pid)) return 'the process of the session has exited';
    return undefined;
  }

  /** A session's input goes only this way, bounded (docs/protocol.md §7.4): see pty/pty-input.ts. */
  #inputOf(sessionId: string, pty: IPty): PtyInput {
    return ptyInput(pty, () => isAlive(pty.pid), this.#log.child({ sessionId }));
  }

  /**
   * Input the PTY cannot take (gone, or its program not reading and the cap reached) is refused;
   * only a write with a `wid` hears why (an older router, or a task's typing, sends none).
   */
  #write(conn: Connection, sessionId: string, data: Uint8Array, wid: number | undefined): void {
    const session = this.#sessions.get(sessionId);
    let problem = this.#unwritable(session);
    if (problem === undefined) {
      this.#trace?.('host.pty_write');
      // #unwritable has just checked that the process lives.
      problem = session!.input.write(data, true);
      if (problem === undefined) {
        this.#events.input(sessionId);
        return;
      }
    }
    conn.log.log('debug', 'write refused', { sessionId, reason: problem });
    if (wid !== undefined) conn.send(encodeFrame({ t: 'write_failed', sessionId, wid, message: `input not written: ${problem}` }));
  }

  /** Applies a size; returns why it could not. */
  #resize(conn: Connection, sessionId: string, cols: number, rows: number): string | undefined {
    const session = this.#sessions.get(sessionId);
    const problem = this.#unwritable(session) ?? sizeProblem(cols, rows);
    if (problem) {
      conn.log.log('warn', 'resize refused', { sessionId, reason: problem });
      return problem;
    }
    try {
      session!.pty.resize(cols, rows);
      session!.info.cols = cols;
      session!.info.rows = rows;
      return undefined;
    } catch (err) {
      conn.log.log('warn', 'resize failed', { sessionId, err });
      return `the PTY refused the size: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  /** Ends a session: the signal to all its processes (SIGKILL for survivors later), and its multiplexer session. */
  #kill(conn: Connection, sessionId: string, signal: string): void {
    const session = this.#session(conn, sessionId, 'kill');
    if (!session) return;
    if (!Object.hasOwn(osConstants.signals, signal)) {
      conn.log.log('warn', 'kill with unknown signal ignored', { sessionId, signal });
      return;
    }
    session.killed = true;
    session.backend.kill(sessionId, session.info.pid, signal as NodeJS.Signals).catch((err: unknown) => {
      this.#log.log('error', 'kill failed', { sessionId, err });
    });
  }

  /** The EventStream's verdict, applied to each PTY (or to the one it names): paused (all, or the ones out of credit or resting), or reading. */
  #applyFlow(sessionId?: string): void {
    if (sessionId === undefined) for (const session of this.#sessions.values()) this.#flow(session);
    else {
      const session = this.#sessions.get(sessionId);
      if (session) this.#flow(session);
    }
    if (this.#events.anyPaused) this.#startReapPoll();
    else this.#stopReapPoll();
  }

  #flow(session: Session): void {
    if (this.#events.sessionPaused(session.info.sessionId) && !session.reaped) session.pty.pause();
    else session.pty.resume();
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
   * unread with it (see holdSlave in pty/slave-hold.ts for why that is the usual way sessions end). A session
   * paused for backpressure would lose its last output that way, so once its process is gone
   * (no more output can come; what is left is bounded by the kernel buffer) it reads on.
   */
  #resumeReaped(): void {
    for (const session of this.#sessions.values()) {
      if (session.reaped || isAlive(session.pty.pid)) continue;
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
