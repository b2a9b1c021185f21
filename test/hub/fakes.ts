// In-memory fakes of the hub's ports (Store, PtyHost, Clock, Screen, ClientConnection), for unit
// tests of one session without a child process, a database or a socket.
import { loadConfig, type Config } from '../../src/core/config.ts';
import type { HubDeps } from '../../src/hub/deps.ts';
import type { JoinRights } from '../../src/hub/join-spec.ts';
import { LiveSession } from '../../src/hub/live-session.ts';
import { Member } from '../../src/hub/member.ts';
import { sessionHostCaps } from '../../src/hub/session-host.ts';
import { newSessionRecord } from '../../src/hub/session-record.ts';
import { NO_METRICS } from '../../src/core/metrics.ts';
import type { ClientConnection } from '../../src/ports/client-connection.ts';
import type { Clock } from '../../src/ports/clock.ts';
import type { LogEntry } from '../../src/protocol/logged-frames.ts';
import type { Logger } from '../../src/ports/logger.ts';
import type { LostRange, QueueListener, SessionPatch, SessionRecord, SequenceState, Store } from '../../src/ports/store.ts';
import type { PtyHost, PtyHostListener, PtySessionInfo, SpawnSpec } from '../../src/ports/pty-host.ts';
import type { Screen, ScreenSnapshot } from '../../src/ports/screen.ts';

export class FakeClock implements Clock {
  t = Date.parse('2026-06-01T00:00:00Z');
  now(): number {
    return this.t;
  }
}

export const silentLogger: Logger = { log: () => undefined, child: () => silentLogger };

/** A promise with its resolve and reject outside. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The log and session rows in memory; `readGate` lets a test hold every readLog until it opens it. */
export class MemoryStore implements Store {
  readonly sessions = new Map<string, SessionRecord>();
  readonly log: LogEntry[] = [];
  readonly prunes: Array<{ sessionId: string; keepFrames: number; keepSeconds: number }> = [];
  readonly updates: SessionPatch[] = [];
  readGate: Promise<void> | null = null;
  pruneGate: Promise<void> | null = null;

  async createSession(rec: SessionRecord): Promise<void> {
    this.sessions.set(rec.id, rec);
  }
  async createSessionWithin(rec: SessionRecord & { createdBy: string }, limit: number): Promise<boolean> {
    const live = [...this.sessions.values()].filter((r) => r.instanceId === rec.instanceId && r.createdBy === rec.createdBy && r.state !== 'closed').length;
    if (live >= limit) return false;
    this.sessions.set(rec.id, rec);
    return true;
  }
  async getSession(_instanceId: string, sessionId: string): Promise<SessionRecord | undefined> {
    return this.sessions.get(sessionId);
  }
  async listSessions(): Promise<SessionRecord[]> {
    return [...this.sessions.values()];
  }
  async updateSession(sessionId: string, patch: SessionPatch): Promise<void> {
    this.updates.push(patch);
    const rec = this.sessions.get(sessionId);
    if (rec) this.sessions.set(sessionId, { ...rec, ...patch } as SessionRecord);
  }
  appendLog(entry: LogEntry): void {
    this.log.push(entry);
  }
  /** Every readLog's `limit` (undefined: the whole rest of the log), in order. */
  readonly readLimits: Array<number | undefined> = [];
  async readLog(sessionId: string, afterSequence: number, limit?: number): Promise<LogEntry[]> {
    this.readLimits.push(limit);
    const rows = this.log.filter((e) => e.sessionId === sessionId && e.sequence > afterSequence);
    if (this.readGate) await this.readGate;
    return limit === undefined ? rows : rows.slice(0, limit);
  }
  async lastFrameOfKind(sessionId: string, kind: string): Promise<LogEntry | undefined> {
    return this.log.filter((e) => e.sessionId === sessionId && e.kind === kind).at(-1);
  }
  async lastSequence(sessionId: string): Promise<number> {
    return this.log.filter((e) => e.sessionId === sessionId).at(-1)?.sequence ?? 0;
  }
  async oldestSequence(sessionId: string): Promise<number | null> {
    return this.log.find((e) => e.sessionId === sessionId)?.sequence ?? null;
  }
  /** Per session: the stored ceiling and numbers skipped (sequenceState). */
  readonly ceilings = new Map<string, number>();
  readonly skipped = new Map<string, number>();
  /** Holds every reserveSequences until opened. */
  reserveGate: Promise<void> | null = null;
  async sequenceState(sessionId: string): Promise<SequenceState> {
    return { stored: await this.lastSequence(sessionId), ceiling: this.ceilings.get(sessionId) ?? 0, skipped: this.skipped.get(sessionId) ?? 0 };
  }
  async reserveSequences(sessionId: string, ceiling: number): Promise<void> {
    if (this.reserveGate) await this.reserveGate;
    this.ceilings.set(sessionId, Math.max(ceiling, this.ceilings.get(sessionId) ?? 0));
  }
  async skipSequences(sessionId: string, _ceiling: number, skipped: number): Promise<void> {
    this.skipped.set(sessionId, (this.skipped.get(sessionId) ?? 0) + skipped);
  }
  async releaseSequences(last: ReadonlyMap<string, number>): Promise<void> {
    for (const [id, sequence] of last) this.ceilings.set(id, sequence);
  }
  async lostRanges(): Promise<LostRange[]> {
    return [];
  }
  async prune(sessionId: string, opts: { keepFrames: number; keepSeconds: number; now: number }): Promise<number> {
    this.prunes.push({ sessionId, keepFrames: opts.keepFrames, keepSeconds: opts.keepSeconds });
    if (this.pruneGate) await this.pruneGate;
    const mine = this.log.filter((e) => e.sessionId === sessionId);
    const newest = new Set(mine.slice(-opts.keepFrames));
    const drop = mine.filter((e) => !newest.has(e) && e.createdAt < opts.now - opts.keepSeconds * 1000);
    for (const e of drop) this.log.splice(this.log.indexOf(e), 1);
    return drop.length;
  }
  onLogLoss(): () => void {
    return () => undefined;
  }
  watchQueue(_listener: QueueListener): () => void {
    return () => undefined;
  }
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}

/**
 * A PTY host that records what the router asks of it; `spawnGate` holds a spawn until opened.
 * `listener` is the router's subscription (a test plays the host's events through it); `listed`
 * is what list() reports, and `listGate` holds it; `writeFailure` fails every write with it.
 */
export class FakePty implements PtyHost {
  readonly spawned: SpawnSpec[] = [];
  listener: PtyHostListener | null = null;
  listed: PtySessionInfo[] = [];
  listGate: Promise<void> | null = null;
  writeFailure: string | null = null;
  readonly writes: Array<{ sessionId: string; text: string }> = [];
  readonly resizes: Array<{ cols: number; rows: number }> = [];
  readonly kills: Array<{ sessionId: string; signal?: string }> = [];
  spawnGate: Promise<void> | null = null;
  spawnFailure: { code: string; message: string } | null = null;

  async spawn(spec: SpawnSpec): Promise<{ pid: number }> {
    this.spawned.push(spec);
    if (this.spawnGate) await this.spawnGate;
    if (this.spawnFailure) throw this.spawnFailure;
    return { pid: 4242 };
  }
  write(sessionId: string, data: Uint8Array, onFailed?: (message: string) => void): void {
    this.writes.push({ sessionId, text: new TextDecoder().decode(data) });
    if (this.writeFailure) onFailed?.(this.writeFailure);
  }
  resize(_sessionId: string, cols: number, rows: number, done?: (error?: string) => void): void {
    this.resizes.push({ cols, rows });
    done?.();
  }
  kill(sessionId: string, signal?: string): void {
    this.kills.push({ sessionId, signal });
  }
  async list(): Promise<PtySessionInfo[]> {
    if (this.listGate) await this.listGate;
    return this.listed;
  }
  subscribe(listener: PtyHostListener): () => void {
    this.listener = listener;
    return () => {
      this.listener = null;
    };
  }
  readonly acks: Array<{ sessionId: string; n: number }> = [];
  readonly epoch: string | null = null;
  startEvents(): void {}
  ack(sessionId: string, n: number): void {
    this.acks.push({ sessionId, n });
  }
  /** Credit given back per session (the credit loop). */
  readonly credits = new Map<string, number>();
  credit(sessionId: string, bytes: number): void {
    this.credits.set(sessionId, (this.credits.get(sessionId) ?? 0) + bytes);
  }
  pauseEvents(): void {}
  resumeEvents(): void {}
  async close(): Promise<void> {}
}

/** An emulator that keeps the text it was fed; its snapshot is that text, cut when asked; `snapshotGate` holds its answer. */
export class FakeScreen implements Screen {
  text = '';
  anchor = 0;
  disposed = false;
  snapshotGate: Promise<void> | null = null;
  constructor(
    public cols: number,
    public rows: number,
    private readonly onFailed?: (error: Error) => void,
  ) {}
  /** As the emulator throwing: its owner hears of it. */
  fail(error: Error): void {
    this.onFailed?.(error);
  }
  write(data: Uint8Array, sequence: number): void {
    this.text += new TextDecoder().decode(data);
    this.anchor = sequence;
  }
  resize(cols: number, rows: number, sequence: number): void {
    this.cols = cols;
    this.rows = rows;
    this.anchor = sequence;
  }
  snapshot(): Promise<ScreenSnapshot> {
    const snap = { snapshot: this.text, cols: this.cols, rows: this.rows, anchor: this.anchor };
    return this.snapshotGate ? this.snapshotGate.then(() => snap) : Promise.resolve(snap);
  }
  snapshotNow(): Promise<ScreenSnapshot> {
    return this.snapshot();
  }
  backlog(): number {
    return 0;
  }
  dispose(): void {
    this.disposed = true;
  }
}

export interface SentFrame {
  op: string;
  id: string;
  sequence: number;
  payload: Record<string, unknown> & { kind?: string };
}

/** A socket that keeps what was sent: JSON frames parsed, binary ones as PW1O sequence + text. */
export class FakeConn implements ClientConnection {
  readonly sent: Array<SentFrame | { binary: true; sequence: number; text: string }> = [];
  closed: { code: number; reason: string } | null = null;
  buffered = 0;
  constructor(readonly binary = false) {}
  sendText(text: string): void {
    this.sent.push(JSON.parse(text) as SentFrame);
  }
  sendBinary(bytes: Uint8Array): void {
    const sequence = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(4));
    this.sent.push({ binary: true, sequence, text: new TextDecoder().decode(bytes.subarray(13)) });
  }
  bufferedAmount(): number {
    return this.buffered;
  }
  close(code: number, reason: string): void {
    this.closed = { code, reason };
  }
  /** What was sent, one short label per frame: `op` or `kind`, with its sequence. */
  labels(): string[] {
    return this.sent.map((f) => ('binary' in f ? `PW1O@${f.sequence}` : `${f.payload.kind ?? f.op}@${f.sequence}`));
  }
  frames(): SentFrame[] {
    return this.sent.filter((f): f is SentFrame => !('binary' in f));
  }
}

export const CONTROL: JoinRights = { principalId: 'alice', mayControl: true, mayAdmin: false };
export const OBSERVE: JoinRights = { principalId: 'olga', mayControl: false, mayAdmin: false };

/** One session over the fakes, as SessionHub.load makes it. */
export class Rig {
  readonly clock = new FakeClock();
  readonly store = new MemoryStore();
  readonly pty = new FakePty();
  readonly screens: FakeScreen[] = [];
  readonly config: Config;
  readonly deps: HubDeps;
  readonly record: SessionRecord;
  readonly retired: LiveSession[] = [];
  session: LiveSession;
  private clients = 0;

  constructor(settings: Partial<Config> = {}, record: Partial<SessionRecord> = {}) {
    this.config = { ...loadConfig({ HOME: '/home/test', SHELL: '/bin/sh' }), ...settings };
    this.deps = {
      config: this.config,
      store: this.store,
      pty: this.pty,
      clock: this.clock,
      logger: silentLogger,
      sessionHost: sessionHostCaps(['native', 'tmux']),
      screens: (cols, rows, _onParsed, onFailed) => {
        const s = new FakeScreen(cols, rows, onFailed);
        this.screens.push(s);
        return s;
      },
      metrics: NO_METRICS,
    };
    const caps = this.deps.sessionHost;
    this.record = {
      ...newSessionRecord({ instanceId: 'local', caps, defaultCols: 80, defaultRows: 24, createdBy: 'alice', now: this.clock.now() }, {}),
      ...record,
    };
    this.store.sessions.set(this.record.id, this.record);
    this.session = this.load(this.record, 0);
  }

  /** A LiveSession over a record, as the hub loads it. */
  load(record: SessionRecord, lastSequence: number): LiveSession {
    return new LiveSession(this.deps, record, { numbering: { last: lastSequence, ceiling: Number.MAX_SAFE_INTEGER }, makeScreen: this.deps.screens, retire: (s) => this.retired.push(s) });
  }

  member(rights: JoinRights = CONTROL, binary = false): { member: Member; conn: FakeConn } {
    const conn = new FakeConn(binary);
    const member = new Member(conn, `client-${++this.clients}`, undefined, rights, this.clock, this.config.lag, () => undefined);
    return { member, conn };
  }

  async join(role: 'controller' | 'observer', o: { rights?: JoinRights; replayFrom?: number; binary?: boolean; cols?: number; rows?: number } = {}): Promise<{ member: Member; conn: FakeConn }> {
    const m = this.member(o.rights, o.binary);
    await this.session.join(m.member, { role, cols: o.cols, rows: o.rows }, o.replayFrom, `join-${m.member.clientId}`);
    return m;
  }

  /** PTY output as the host reports it, then the turn in which the session logs it. */
  async output(text: string): Promise<void> {
    this.session.onOutput(new TextEncoder().encode(text));
    await turn();
  }
}

/** Lets the session's PTY event queue run (it drains on the next event-loop turn). */
export function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Lets the hub's promises and the session's event queue run until `done` holds; throws if it never does. */
export async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (done()) return;
    await turn();
  }
  if (!done()) throw new Error(`not reached in 500 turns: ${done.toString()}`);
}

/** A client TEXT frame, as a connection's onText gets it. */
export function clientFrame(op: string, payload: Record<string, unknown> = {}, id = op, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ op, id, ts: '2026-06-01T00:00:00Z', payload, ...extra });
}
