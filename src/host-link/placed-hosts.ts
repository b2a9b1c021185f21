// The PtyHost the hub talks to when PTY hosts may dial in (docs/remote-hosts.md): the local host,
// and each linked remote host by name. A session placed on a remote host at its creation goes there
// (SpawnSpec.host); its input, sizes, ends, credit and acknowledgements follow it by session id
// (each host runs its sessions' credit loops, docs/architecture.md "The credit loop"). Everything
// else (sessions without a host) is the local host's, exactly as without remote hosts.

import { PtyHostError } from '../../pty/wire/protocol.ts';
import type { HostResume, PtyExit, PtyHost, PtyHostListener, PtySessionInfo, SpawnSpec } from '../ports/pty-host.ts';
import type { Logger } from '../ports/logger.ts';

/** A remote host's connection, as its link route made it. */
export interface RemoteHost extends PtyHost {
  /** The backends it said it runs. */
  readonly backends: readonly string[];
  /** What a session that names no program runs there, if it said (its login shell). */
  readonly shell?: string | undefined;
}

export interface HostLink {
  readonly name: string;
  readonly host: RemoteHost;
  /** Ends the link (the host reconnects unless its credential is gone). */
  drop(code: number, reason: string): void;
}

interface Linked {
  link: HostLink;
  /** ms since the epoch. */
  since: number;
  unsubscribe: () => void;
}

/** What the hub acknowledged per remote host, so a host that links again resends only what was not logged. */
interface Acked {
  epoch: string;
  after: Record<string, number>;
}

export interface PlacedHostsOptions {
  clock?: () => number;
  /**
   * The sessions this router placed on `host` (its store's records): of what a linking host
   * lists, only those are placed on it again. Default: none.
   */
  placedOn?: (host: string) => Promise<ReadonlySet<string>>;
  /**
   * Takes up the sessions a linking host lists that are placed on it (SessionHub.adoptRemote),
   * before its events flow; they are placed first, so the kill of one ended here reaches it.
   */
  adopt?: (host: string, listed: readonly PtySessionInfo[]) => Promise<void>;
  /** A host's link is down (SessionHub.remoteHostLost): its sessions wait for it to link again. */
  lost?: (host: string, reason: string) => void;
}

export class PlacedHosts implements PtyHost {
  readonly #local: PtyHost;
  readonly #localRoute: { readonly host: PtyHost };
  readonly #logger: Logger;
  readonly #clock: () => number;
  readonly #linked = new Map<string, Linked>();
  /** Names claimed by a link being opened: a second link of the name is refused meanwhile too. */
  readonly #claimed = new Set<string>();
  /** Remote sessions by id → host name (local ones are not listed). */
  readonly #placed = new Map<string, string>();
  readonly #acked = new Map<string, Acked>();
  readonly #listeners = new Set<PtyHostListener>();
  /** Whether the hub gives credit back, once it asked for events: hosts linked later start theirs so. */
  #events: { credit: boolean | undefined } | undefined;
  #eventsPaused = false;

  readonly #adopt: (host: string, listed: readonly PtySessionInfo[]) => Promise<void>;
  readonly #placedOn: (host: string) => Promise<ReadonlySet<string>>;
  readonly #lost: (host: string, reason: string) => void;

  constructor(local: PtyHost, logger: Logger, options: PlacedHostsOptions = {}) {
    this.#local = local;
    this.#localRoute = { host: local };
    this.#logger = logger;
    this.#clock = options.clock ?? Date.now;
    this.#adopt = options.adopt ?? (() => Promise.resolve());
    this.#placedOn = options.placedOn ?? (() => Promise.resolve(new Set()));
    this.#lost = options.lost ?? (() => undefined);
  }

  // ------------------------------------------------------------------ links

  /**
   * Reserves `name` for a link being opened; false when it is linked (or being linked) already:
   * one live link per name. Call `link` or `release` after.
   */
  claim(name: string): boolean {
    if (this.#linked.has(name) || this.#claimed.has(name)) return false;
    this.#claimed.add(name);
    return true;
  }

  release(name: string): void {
    this.#claimed.delete(name);
  }

  /** A claimed name's link is up (its host greeted): its sessions are placed and its events start. */
  async link(link: HostLink): Promise<void> {
    const { name, host } = link;
    this.#claimed.delete(name);
    // A host speaks only for the sessions placed on it: an event naming any other (the local
    // host's, another host's) is dropped, so a host credential reaches no other terminal. Dropped,
    // it is acknowledged and its output taken, to that host alone.
    const foreign = new Set<string>();
    const mine = (id: string, n: number | undefined, bytes = 0): boolean => {
      if (this.#placed.get(id) === name) return true;
      if (n !== undefined) host.ack(id, n);
      if (bytes > 0) host.credit(id, bytes);
      if (!foreign.has(id)) {
        foreign.add(id);
        this.#logger.log('warn', 'a remote PTY host sent events of a session not placed on it: dropped', { host: name, session: id });
      }
      return false;
    };
    const unsubscribe = host.subscribe({
      onData: (id, data, n) => mine(id, n, data.byteLength) && this.#notify((l) => l.onData(id, data, n)),
      onExit: (id, exit, n) => mine(id, n) && this.#exited(id, exit, n),
      onHostLost: (reason) => this.#unlinked(link, reason),
    });
    this.#linked.set(name, { link, since: this.#clock(), unsubscribe });
    const [listed, ours] = await Promise.all([
      host.list().catch((e: unknown) => {
        this.#logger.log('warn', 'could not list a linked host\'s sessions', { host: name, error: String(e) });
        return [];
      }),
      this.#placedOn(name),
    ]);
    const placed = listed.filter((info) => ours.has(info.sessionId));
    for (const info of placed) this.#placed.set(info.sessionId, name);
    await this.#adopt(name, placed).catch((e: unknown) => this.#logger.log('error', 'could not take up a linked host\'s sessions', { host: name, error: String(e) }));
    if (this.#eventsPaused) host.pauseEvents();
    if (this.#events) this.#startRemote(name, host);
    this.#logger.log('info', 'remote PTY host linked', { host: name, backends: host.backends });
  }

  /** Ends the named host's link, if it is up (its credential was revoked). */
  drop(name: string, code: number, reason: string): boolean {
    const linked = this.#linked.get(name);
    if (!linked) return false;
    linked.link.drop(code, reason);
    this.#unlinked(linked.link, reason);
    return true;
  }

  linked(name: string): { since: number; backends: readonly string[]; shell: string | undefined } | undefined {
    const l = this.#linked.get(name);
    return l && { since: l.since, backends: l.link.host.backends, shell: l.link.host.shell };
  }

  /** Sessions placed on the named host that have not ended. */
  sessionsOn(name: string): number {
    let count = 0;
    for (const host of this.#placed.values()) if (host === name) count++;
    return count;
  }

  #unlinked(link: HostLink, reason: string): void {
    const linked = this.#linked.get(link.name);
    if (linked?.link !== link) return;
    this.#linked.delete(link.name);
    linked.unsubscribe();
    this.#logger.log('warn', 'remote PTY host link lost', { host: link.name, reason });
    this.#lost(link.name, reason);
  }

  #startRemote(name: string, host: RemoteHost): void {
    const acked = this.#acked.get(name);
    const resume: HostResume | undefined = acked && acked.epoch === host.epoch ? { epoch: acked.epoch, after: { ...acked.after } } : undefined;
    host.startEvents(resume, this.#events?.credit);
  }

  #exited(sessionId: string, exit: PtyExit, n: number | undefined): void {
    this.#notify((l) => l.onExit(sessionId, exit, n));
    this.#placed.delete(sessionId);
  }

  #notify(call: (listener: PtyHostListener) => void): void {
    for (const listener of [...this.#listeners]) {
      try {
        call(listener);
      } catch (err) {
        this.#logger.log('error', 'pty host listener threw', { err });
      }
    }
  }

  /** The session's host: the remote one it is placed on (null while that is not linked), else the local one. */
  #hostOf(sessionId: string): { host: PtyHost | null; name?: string } {
    const name = this.#placed.get(sessionId);
    // Every write, ack and credit of a local session asks: one answer, made once.
    if (name === undefined) return this.#localRoute;
    return { host: this.#linked.get(name)?.link.host ?? null, name };
  }

  // ------------------------------------------------------------------ PtyHost

  spawn(spec: SpawnSpec): Promise<{ pid: number }> {
    const { host: name, ...rest } = spec;
    if (name === undefined) return this.#local.spawn(rest);
    const linked = this.#linked.get(name);
    if (!linked) return Promise.reject(new PtyHostError('spawn_failed', `the PTY host ${name} is not linked to this router right now; try again once it is`));
    this.#placed.set(spec.sessionId, name);
    return linked.link.host.spawn(rest).catch((e: unknown) => {
      this.#placed.delete(spec.sessionId);
      throw e;
    });
  }

  /** The local host's sessions: a remote host's are its link's (placed when it links). */
  list(): Promise<PtySessionInfo[]> {
    return this.#local.list();
  }

  write(sessionId: string, data: Uint8Array, onFailed?: (message: string) => void): void {
    const { host, name } = this.#hostOf(sessionId);
    if (host) host.write(sessionId, data, onFailed);
    else onFailed?.(unlinked(name));
  }

  resize(sessionId: string, cols: number, rows: number, done?: (error?: string) => void): void {
    const { host, name } = this.#hostOf(sessionId);
    if (host) host.resize(sessionId, cols, rows, done);
    else done?.(unlinked(name));
  }

  kill(sessionId: string, signal?: string): void {
    this.#hostOf(sessionId).host?.kill(sessionId, signal);
  }

  subscribe(listener: PtyHostListener): () => void {
    this.#listeners.add(listener);
    const offLocal = this.#local.subscribe(listener);
    return () => {
      this.#listeners.delete(listener);
      offLocal();
    };
  }

  startEvents(resume?: HostResume, credit?: boolean): void {
    this.#local.startEvents(resume, credit);
    const first = this.#events === undefined;
    this.#events = { credit };
    if (first) for (const [name, linked] of this.#linked) this.#startRemote(name, linked.link.host);
  }

  ack(sessionId: string, n: number): void {
    const { host, name } = this.#hostOf(sessionId);
    if (name !== undefined && host?.epoch) {
      let acked = this.#acked.get(name);
      if (acked?.epoch !== host.epoch) this.#acked.set(name, (acked = { epoch: host.epoch, after: {} }));
      acked.after[sessionId] = Math.max(n, acked.after[sessionId] ?? 0);
    }
    host?.ack(sessionId, n);
  }

  /** The local host's: the hub's own resume bookkeeping is for it; remote hosts' is kept here (ack). */
  get epoch(): string | null {
    return this.#local.epoch;
  }

  pauseEvents(): void {
    this.#eventsPaused = true;
    this.#local.pauseEvents();
    for (const { link } of this.#linked.values()) link.host.pauseEvents();
  }

  resumeEvents(): void {
    this.#eventsPaused = false;
    this.#local.resumeEvents();
    for (const { link } of this.#linked.values()) link.host.resumeEvents();
  }

  /** To the session's host; credit for a host not linked now is moot (its next link counts afresh). */
  credit(sessionId: string, bytes: number): void {
    this.#hostOf(sessionId).host?.credit(sessionId, bytes);
  }

  /** Ends every remote link: their hosts keep their sessions and link again (to the next router). */
  dropAll(code: number, reason: string): void {
    for (const { link } of [...this.#linked.values()]) this.drop(link.name, code, reason);
  }

  async close(): Promise<void> {
    this.dropAll(1001, 'router stopping');
    await this.#local.close();
  }
}

function unlinked(name: string | undefined): string {
  return `the PTY host ${name ?? ''} of this session is not linked to the router right now`;
}
