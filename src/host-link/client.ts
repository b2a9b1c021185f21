// The router's side of the PTY host socket (see protocol.ts): requests matched to replies, session
// events to the listeners, the host's greeting and log lines. Portable on purpose: each runtime
// adapter hands it a HostSocket over its own Unix-socket API (node:net, Deno.connect).

import type { HostResume, PtyHost, PtyHostListener, PtySessionInfo, SpawnSpec } from '../ports/pty-host.ts';
import type { LogLevel, Logger } from '../ports/logger.ts';
import { AckBatch } from './ack-batch.ts';
import { encodeWriteFrame } from '../../pty/wire/binary-frame.ts';
import { CreditLoop } from '../../pty/wire/credit-loop.ts';
import { FrameDecoder } from '../../pty/wire/frame-decoder.ts';
import { InputInFlight } from './input-in-flight.ts';
import { HostMessageSchema, MAX_BODY_BYTES, PROTOCOL_VERSION, PtyHostError, type HostFeature, type HostMessage, type Request, encodeFrame } from '../../pty/wire/protocol.ts';
import type { ConfinementReport } from '../core/session-confinement.ts';

/** A connected byte stream to the host, as the runtime provides it. */
export interface HostSocket {
  /**
   * Queues bytes in order; dropped once the socket is ending. `written`, when given, is called once
   * they are handed to the OS, or dropped (the socket closed): input accounting (input-in-flight.ts).
   */
  write(bytes: Uint8Array, written?: () => void): void;
  /** Sends what is queued, then closes our side; `close` follows once the host closed its side. */
  end(): void;
  /** Closes at once; `close` follows. */
  destroy(): void;
  readonly writable: boolean;
  readonly closed: boolean;
  /** Stops reading: the host sees a full buffer and pauses its PTYs (link backpressure). */
  pause(): void;
  resume(): void;
  /** Called once, before any event can fire: `error` (if any) comes before `close`, which comes once. */
  listen(events: HostSocketEvents): void;
}

export interface HostSocketEvents {
  /** Bytes read, valid only during the call: the client copies what it keeps, so the runtime may read into the same memory again. */
  data(chunk: Uint8Array): void;
  error(err: Error): void;
  close(): void;
}

export interface PtyHostClientOptions {
  /** How long connecting and the host's greeting may take. Default 5 s. */
  timeoutMs?: number;
  /** How long a spawn or list may go unanswered. Default 10 s. */
  requestTimeoutMs?: number;
  /** Receives listener failures; without it they go to console.error. */
  logger?: Logger;
}

type Reply = Extract<HostMessage, { rid: number }>;

/** Writes whose failure may still be reported, by `wid`: the oldest are forgotten past this many. */
const MAX_WATCHED_WRITES = 1024;

interface Pending {
  resolve(reply: Reply): void;
  reject(err: PtyHostError): void;
  timer: ReturnType<typeof setTimeout>;
}

export class PtyHostConnection implements PtyHost {
  readonly #socket: HostSocket;
  readonly #decoder = new FrameDecoder(HostMessageSchema);
  readonly #requestTimeoutMs: number;
  readonly #logger: Logger | undefined;
  readonly #listeners = new Set<PtyHostListener>();
  readonly #pending = new Map<number, Pending>();
  readonly #greeted: Promise<void>;
  #greet: { resolve(): void; reject(err: Error): void } | undefined;
  readonly #socketClosed: Promise<void>;
  #nextRid = 1;
  #backends: string[] = [];
  #shell: string | undefined;
  #hostPid = 0;
  #epoch: string | null = null;
  #confinement: ConfinementReport | undefined;
  #features = new Set<string>();
  #startedBy: string | undefined;
  /** Who hears of a write the host could not make, by its `wid` (insertion order: oldest first). */
  readonly #watchedWrites = new Map<number, (message: string) => void>();
  readonly #inputInFlight = new InputInFlight();
  #nextWid = 1;
  /** Resizes waiting for their `resized`, by rid: answered synchronously as the reply is read. */
  readonly #resizes = new Map<number, { done(error?: string): void; timer: ReturnType<typeof setTimeout> }>();
  /** The router-wide backstop holds the link (pauseEvents). */
  #allPaused = false;
  /**
   * The credit loop run on this side, for a host without `session_credit` (an older one): it can
   * only be paused whole, so this connection stops reading while any session is out of credit.
   */
  #localCredit: CreditLoop | undefined;
  /** Set once the connection is over, whether by close() or by losing it. */
  #ended = false;
  #lossReason: string | undefined;
  readonly #acks = new AckBatch((bytes) => this.#write(bytes));

  /**
   * Waits for the host's greeting on a freshly connected socket. Rejects with the socket's error
   * (ENOENT, ECONNREFUSED, ...) or when no greeting comes within the timeout.
   */
  static async greet<C extends PtyHostConnection>(client: C, where: string, timeoutMs = 5000): Promise<C> {
    const timer = setTimeout(() => client.#fail(new Error(`no pty host greeting on ${where} within ${timeoutMs} ms`)), timeoutMs);
    try {
      await client.#greeted;
      return client;
    } finally {
      clearTimeout(timer);
    }
  }

  constructor(socket: HostSocket, options: PtyHostClientOptions = {}) {
    this.#socket = socket;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#logger = options.logger;
    this.#greeted = new Promise((resolve, reject) => {
      this.#greet = { resolve, reject };
    });
    let socketClosed!: () => void;
    this.#socketClosed = new Promise<void>((resolve) => {
      socketClosed = resolve;
    });
    socket.listen({
      data: (chunk) => this.#receive(chunk),
      error: (err) => {
        this.#lossReason ??= err.message;
        this.#greet?.reject(err);
      },
      close: () => {
        socketClosed();
        this.#closed();
      },
    });
  }

  /** The backends the host runs, from its greeting. */
  get backends(): readonly string[] {
    return this.#backends;
  }

  /** A remote host's default program for sessions that name none, from its greeting. */
  get shell(): string | undefined {
    return this.#shell;
  }

  /** How the host runs sessions, from its greeting (undefined from a host too old to say: unconfined). */
  get confinement(): ConfinementReport | undefined {
    return this.#confinement;
  }

  get hostPid(): number {
    return this.#hostPid;
  }

  get epoch(): string | null {
    return this.#epoch;
  }

  /** The state directory of the router that started the host, from its greeting (undefined: started on its own). */
  get startedBy(): string | undefined {
    return this.#startedBy;
  }

  /**
   * Session events (and whatever the host held while no router listened) flow from now on.
   * `credit`: the caller gives credit back as it takes each session's output (credit()), so the
   * credit loop bounds each session: at the host when it runs the loop (`session_credit`), else here.
   */
  startEvents(resume?: HostResume, credit = false): void {
    // Output in binary form from a host that has it (docs/protocol.md §9.2); an older one gets no such key.
    const binaryData = this.supports('binary_data') ? { binaryData: true } : {};
    const atHost = credit && this.supports('session_credit');
    this.#localCredit = credit && !atHost ? new CreditLoop() : undefined;
    this.#applySocketFlow();
    this.#send({ t: 'events', ...(resume ? { resume } : {}), ...binaryData, ...(atHost ? { credit: true } : {}) });
  }

  /** Durability, sent with the turn's other returns (ack-batch.ts). */
  ack(sessionId: string, n: number): void {
    this.#acks.add(sessionId, n);
  }

  /** The credit loop: `bytes` more of the session's output are taken (sent with the turn's other returns). */
  credit(sessionId: string, bytes: number): void {
    if (!this.#localCredit) return this.#acks.credit(sessionId, bytes);
    if (this.#localCredit.taken(sessionId, bytes)) this.#applySocketFlow();
  }

  /** Whether the host named this feature in its greeting (pty/wire/protocol.ts, HOST_FEATURES). */
  supports(feature: HostFeature): boolean {
    return this.#features.has(feature);
  }

  pauseEvents(): void {
    this.#allPaused = true;
    this.#applySocketFlow();
  }

  resumeEvents(): void {
    this.#allPaused = false;
    this.#applySocketFlow();
  }

  #applySocketFlow(): void {
    if (this.#allPaused || this.#localCredit?.anyPaused) this.#socket.pause();
    else this.#socket.resume();
  }

  async spawn(spec: SpawnSpec): Promise<{ pid: number }> {
    const reply = await this.#request((rid) => ({ t: 'spawn', rid, spec }));
    if (reply.t !== 'spawned') throw unexpected(reply);
    return { pid: reply.pid };
  }

  async list(): Promise<PtySessionInfo[]> {
    const reply = await this.#request((rid) => ({ t: 'list', rid }));
    if (reply.t !== 'listed') throw unexpected(reply);
    return reply.sessions;
  }

  write(sessionId: string, data: Uint8Array, onFailed?: (message: string) => void): void {
    const refused = this.#inputInFlight.refusal(sessionId, data.byteLength);
    if (refused !== undefined) {
      onFailed?.(refused);
      return;
    }
    const watch = onFailed && this.supports('write_failures');
    for (let offset = 0; offset < data.byteLength; offset += MAX_BODY_BYTES) {
      const part = data.subarray(offset, offset + MAX_BODY_BYTES);
      const written = this.#inputInFlight.sending(sessionId, part.byteLength);
      if (!watch) {
        this.#send({ t: 'write', sessionId, data: part }, written);
        continue;
      }
      const wid = this.#nextWid++;
      this.#watchedWrites.set(wid, onFailed);
      if (this.#watchedWrites.size > MAX_WATCHED_WRITES) this.#watchedWrites.delete(this.#watchedWrites.keys().next().value!);
      this.#send({ t: 'write', sessionId, data: part, wid }, written);
    }
  }

  /**
   * `done` hears the host's answer as it is read, before any event behind it (see PtyHost.resize); a
   * host without `resize_reply` is not asked, and `done` is called at once.
   */
  resize(sessionId: string, cols: number, rows: number, done: (error?: string) => void = () => undefined): void {
    if (!this.supports('resize_reply')) {
      this.#send({ t: 'resize', sessionId, cols, rows });
      done();
      return;
    }
    if (this.#ended) {
      done(this.#endedMessage());
      return;
    }
    const rid = this.#nextRid++;
    const timer = setTimeout(() => {
      this.#resizes.delete(rid);
      done(`the PTY host did not answer within ${this.#requestTimeoutMs} ms`);
    }, this.#requestTimeoutMs);
    this.#resizes.set(rid, { done, timer });
    this.#send({ t: 'resize', rid, sessionId, cols, rows });
  }

  kill(sessionId: string, signal?: string): void {
    this.#send({ t: 'kill', sessionId, signal });
  }

  subscribe(listener: PtyHostListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Asks the host to stop (feature `shutdown`; a host a router started does) and waits up to
   * `timeoutMs` for it to close the connection; then closes ours. True once the host closed it.
   */
  async shutdown(timeoutMs = STOP_GRACE_MS): Promise<boolean> {
    if (!this.supports('shutdown') || this.#ended) {
      await this.close();
      return false;
    }
    this.#acks.flush();
    this.#send({ t: 'shutdown' });
    this.#ended = true;
    this.#rejectPending('pty host stopping');
    let timer: ReturnType<typeof setTimeout> | undefined;
    const closed = await Promise.race([this.#socketClosed.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
    clearTimeout(timer);
    if (!closed) this.#socket.destroy();
    return closed;
  }

  /** Ends the connection after flushing queued writes; does not fire onHostLost. */
  async close(): Promise<void> {
    if (this.#socket.closed) return;
    if (!this.#ended) {
      // What this router handled, the host may forget.
      this.#acks.flush();
      this.#ended = true;
      this.#rejectPending('pty host client closed');
      this.#socket.end();
    }
    const timer = setTimeout(() => this.#socket.destroy(), 1000);
    try {
      await this.#socketClosed;
    } finally {
      clearTimeout(timer);
    }
  }

  #request(build: (rid: number) => Extract<Request, { rid: number }>): Promise<Reply> {
    if (this.#ended) return Promise.reject(new PtyHostError('spawn_failed', this.#endedMessage()));
    const rid = this.#nextRid++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(rid);
        reject(new PtyHostError('spawn_failed', `pty host did not answer within ${this.#requestTimeoutMs} ms`));
      }, this.#requestTimeoutMs);
      this.#pending.set(rid, { resolve, reject, timer });
      this.#send(build(rid));
    });
  }

  #send(msg: Request, written?: () => void): void {
    // `write` is the hot one (every keystroke): binary to a host that reads it, JSON to an older one.
    this.#write(msg.t === 'write' && this.#features.has('binary_data') ? encodeWriteFrame(msg) : encodeFrame(msg), written);
  }

  #write(bytes: Uint8Array, written?: () => void): void {
    if (this.#ended || !this.#socket.writable) return written?.();
    this.#socket.write(bytes, written);
  }

  #receive(chunk: Uint8Array): void {
    try {
      this.#decoder.each(chunk, (msg) => this.#dispatch(msg));
    } catch (err) {
      this.#fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  #dispatch(msg: HostMessage): void {
    switch (msg.t) {
      case 'hello':
        if (msg.protocol !== PROTOCOL_VERSION) {
          this.#fail(new Error(`pty host speaks protocol ${msg.protocol}, this router speaks ${PROTOCOL_VERSION}`));
          return;
        }
        this.#backends = msg.backends;
        this.#hostPid = msg.pid;
        this.#epoch = msg.epoch ?? null;
        this.#confinement = msg.confinement;
        this.#features = new Set(msg.features ?? []);
        this.#startedBy = msg.startedBy;
        this.#shell = msg.shell;
        this.#greet?.resolve();
        this.#greet = undefined;
        return;
      case 'data':
        if (this.#localCredit?.sent(msg.sessionId, msg.data.byteLength)) this.#applySocketFlow();
        this.#notify((l) => l.onData(msg.sessionId, msg.data, msg.n));
        return;
      case 'exit':
        if (this.#localCredit?.forget(msg.sessionId)) this.#applySocketFlow();
        this.#notify((l) => l.onExit(msg.sessionId, { exitCode: msg.exitCode, signal: msg.signal }, msg.n));
        return;
      case 'resized': {
        const pending = this.#resizes.get(msg.rid);
        if (!pending) return; // already timed out
        this.#resizes.delete(msg.rid);
        clearTimeout(pending.timer);
        pending.done(msg.error);
        return;
      }
      case 'write_failed': {
        const onFailed = this.#watchedWrites.get(msg.wid);
        this.#watchedWrites.delete(msg.wid);
        onFailed?.(msg.message);
        return;
      }
      default:
        this.#settle(msg);
    }
  }

  #settle(reply: Reply): void {
    const pending = this.#pending.get(reply.rid);
    if (!pending) return; // already timed out
    this.#pending.delete(reply.rid);
    clearTimeout(pending.timer);
    if (reply.t === 'failed') pending.reject(new PtyHostError(reply.code, reply.message));
    else pending.resolve(reply);
  }

  #notify(call: (listener: PtyHostListener) => void): void {
    for (const listener of [...this.#listeners]) {
      try {
        call(listener);
      } catch (err) {
        if (this.#logger) this.#logger.log('error', 'pty host listener threw', { err });
        else console.error('pty host listener threw', err);
      }
    }
  }

  /** Tears the connection down because it cannot be trusted any more. */
  #fail(err: Error): void {
    this.#lossReason ??= err.message;
    this.#greet?.reject(err);
    this.#socket.destroy();
  }

  #closed(): void {
    this.#greet?.reject(new Error(this.#lossReason ?? 'pty host closed the connection'));
    this.#greet = undefined;
    if (this.#ended) return;
    this.#ended = true;
    const reason = this.#lossReason ?? 'pty host closed the connection';
    this.#rejectPending(`pty host connection lost: ${reason}`);
    this.#notify((l) => l.onHostLost?.(reason));
  }

  #rejectPending(message: string): void {
    for (const { reject, timer } of this.#pending.values()) {
      clearTimeout(timer);
      reject(new PtyHostError('spawn_failed', message));
    }
    this.#pending.clear();
    const resizes = [...this.#resizes.values()];
    this.#resizes.clear();
    for (const { done, timer } of resizes) {
      clearTimeout(timer);
      done(message);
    }
  }

  #endedMessage(): string {
    return this.#lossReason ? `pty host connection lost: ${this.#lossReason}` : 'pty host client closed';
  }
}

function unexpected(reply: Reply): PtyHostError {
  return new PtyHostError('spawn_failed', `unexpected pty host reply '${reply.t}'`);
}

// ---------------------------------------------------------------- a host process the router started

/** What a host prints on stdout once it accepts connections (src/adapter/node/pty-host-main.ts). */
export const LISTENING_LINE = 'pty-host listening ';

/** How long a stopping host gets between SIGTERM and SIGKILL. */
export const STOP_GRACE_MS = 5000;

/** Connect errors that mean "nobody listens there": start a host. */
export function noHostListening(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ECONNREFUSED';
}

const LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'] satisfies LogLevel[];

/** Re-logs one of the host's JSON log lines through the router's logger. */
export function relayHostLog(log: Logger, line: string): void {
  try {
    const { level, msg, time: _time, component: _component, ...fields } = JSON.parse(line) as Record<string, unknown>;
    if (typeof level === 'string' && LEVELS.includes(level) && typeof msg === 'string') {
      log.log(level as LogLevel, msg, fields);
      return;
    }
  } catch {
    // not one of its JSON lines: relayed verbatim below
  }
  log.log('warn', line);
}
