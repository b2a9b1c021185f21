// One session's screen model and keyframes (docs/protocol.md §6.3): the emulator every Output byte
// is folded into, the snapshots cut from it (timed, for the metrics), and the periodic cadence.
// An emulator that breaks (it threw: a bug a byte stream or a resize reached) is rebuilt from the
// log, the frames that arrive meanwhile folded in after (docs/architecture.md, "The screen model").
import type { Config } from '../core/config.ts';
import type { Metrics } from '../core/metrics.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { Screen, ScreenFactory, ScreenSnapshot } from '../ports/screen.ts';
import type { SessionRecord, Store } from '../ports/store.ts';
import { KeyframeCadence } from './keyframe-cadence.ts';
import { rebuildScreen } from './screen-rebuild.ts';

/** A session whose emulator broke this often stays without one (KEYFRAME_UNAVAILABLE): its output keeps breaking it. */
const MAX_REBUILDS = 3;
/**
 * Output held for a rebuild beyond which the session's PTY events wait for it: the host's window
 * then stops the PTY, so a flood during a slow rebuild costs this much memory, not all of it.
 */
const MAX_HELD_BYTES = 4 * 1024 * 1024;

type Held = { data: Uint8Array; sequence: number } | { cols: number; rows: number; sequence: number };

export interface SessionScreenDeps {
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  store: Store;
  config: Pick<Config, 'keyframeIntervalFrames' | 'keyframeIntervalSeconds'>;
}

/** What the screen needs of its session: for a periodic cut, its PTY events held meanwhile and the Keyframe logged; for a rebuild, its record. */
export interface ScreenOwner {
  hold(): void;
  release(): void;
  /** Logs the periodic Keyframe, unless the session has ended meanwhile. */
  logged(snap: ScreenSnapshot): void;
  record(): SessionRecord;
}

/**
 * - `none`: no emulator: not made yet, or given up on after breaking MAX_REBUILDS times.
 * - `ready`: `screen` folds in every frame.
 * - `rebuilding`: the emulator broke; a new one is rebuilt from the log (`done`), and the frames
 *   (and resizes) that arrive meanwhile are `held`, with their bytes; `holding` says whether they
 *   hold the session's PTY events.
 * - `disposed`: the session let go of it (retired, or its process could not start). A join of an
 *   ended session may still rebuild it, and a start make a new one.
 */
type Phase =
  | { state: 'none' }
  | { state: 'ready'; screen: Screen }
  | { state: 'rebuilding'; done: Promise<void>; held: Held[]; heldBytes: number; holding: boolean }
  | { state: 'disposed' };

export class SessionScreen {
  private phase: Phase = { state: 'none' };
  private readonly cadence: KeyframeCadence;
  /** The periodic cut under way, if any: at most one at a time, whatever happens to the emulator meanwhile. */
  private cutting: Promise<void> | null = null;
  /** Emulators that threw: the current one, or one being rebuilt. */
  private readonly broken = new WeakMap<Screen, Error>();
  private rebuilds = 0;

  constructor(
    private readonly sessionId: string,
    private readonly deps: SessionScreenDeps,
    makeScreen: ScreenFactory,
    private readonly owner: ScreenOwner,
  ) {
    this.makeScreen = (cols, rows) => {
      const made: Screen = makeScreen(cols, rows, undefined, (error) => this.failed(made, error));
      return made;
    };
    this.cadence = new KeyframeCadence(deps.config.keyframeIntervalFrames, deps.config.keyframeIntervalSeconds, () => this.cutPeriodic());
  }

  /** Makes this session's emulators: each one's failure comes back here. */
  private readonly makeScreen: ScreenFactory;

  get exists(): boolean {
    return this.phase.state === 'ready' || this.phase.state === 'rebuilding';
  }

  /** A fresh emulator at this size (made before the process starts, so its first bytes are folded in). */
  create(cols: number, rows: number): void {
    this.phase = { state: 'ready', screen: this.makeScreen(cols, rows) };
  }

  /** An emulator if there is none yet (a session adopted from the PTY host). */
  ensure(cols: number, rows: number): void {
    if (!this.exists) this.create(cols, rows);
  }

  /** The session's screen from the log, if it has none: a retired session's for a join, a running one's after a router restart. */
  async ensureRebuilt(): Promise<void> {
    if (this.phase.state === 'rebuilding') await this.phase.done;
    if (this.ready) return;
    const { screen } = await rebuildScreen(this.deps.store, this.owner.record(), this.makeScreen);
    // Two joins of a retired session may each rebuild: the first one made is kept.
    if (this.ready) return screen.dispose();
    // Retired meanwhile (a join of an ended session can race its retirement): the join still needs
    // the screen; the session is retired again once the join is done (LiveSession.retireIfIdle).
    this.install(screen);
  }

  /** Read anew after every wait: the phase may have changed meanwhile. */
  private get ready(): boolean {
    return this.phase.state === 'ready';
  }

  /** A rebuilt emulator becomes the session's; one that broke while it was being rebuilt is rebuilt again. */
  private install(screen: Screen): void {
    this.phase = { state: 'ready', screen };
    const broke = this.broken.get(screen);
    if (broke) this.failed(screen, broke);
  }

  /** Folds in the bytes of the Output frame numbered `sequence`, and counts it for the cadence. */
  output(data: Uint8Array, sequence: number): void {
    const p = this.phase;
    if (p.state === 'rebuilding') {
      p.held.push({ data, sequence });
      p.heldBytes += data.byteLength;
      // Asked again on every frame past the cap: a periodic cut's release may have let go of it.
      if (p.heldBytes >= MAX_HELD_BYTES) {
        p.holding = true;
        this.owner.hold();
      }
    } else if (p.state === 'ready') {
      p.screen.write(data, sequence);
    }
    this.cadence.onOutput();
  }

  resize(cols: number, rows: number, sequence: number): void {
    const p = this.phase;
    if (p.state === 'rebuilding') p.held.push({ cols, rows, sequence });
    else if (p.state === 'ready') p.screen.resize(cols, rows, sequence);
  }

  /** The screen after everything written so far; null when there is none. */
  snapshot(occasion: 'join' | 'request' | 'lag'): Promise<ScreenSnapshot> | null {
    const p = this.phase;
    if (p.state === 'rebuilding') return p.done.then(() => this.snapshot(occasion) ?? Promise.reject(new Error('the screen model could not be rebuilt')));
    return p.state === 'ready' ? this.timed(occasion, p.screen, false) : null;
  }

  /**
   * An emulator threw. The current one is replaced by one rebuilt from the log (its latest
   * Keyframe and the frames after it: every frame is logged before it reaches the screen), and
   * what arrives meanwhile is folded in after; snapshots wait for it. One that breaks
   * MAX_REBUILDS times is not rebuilt again.
   */
  private failed(screen: Screen, error: Error): void {
    this.broken.set(screen, error);
    if (this.phase.state !== 'ready' || this.phase.screen !== screen) return;
    screen.dispose();
    this.deps.metrics.inc('screen_failures_total');
    const giveUp = this.rebuilds >= MAX_REBUILDS;
    this.deps.logger.log('error', giveUp ? 'screen model failed again: the session has no Keyframes from now on' : 'screen model failed: rebuilding it from the log', { session: this.sessionId, error, rebuilds: this.rebuilds });
    if (giveUp) {
      this.phase = { state: 'none' };
      return;
    }
    this.rebuilds++;
    const rebuilding: Phase & { state: 'rebuilding' } = { state: 'rebuilding', done: Promise.resolve(), held: [], heldBytes: 0, holding: false };
    // The session's PTY events flow again once the held frames are folded in (or dropped with the rebuild).
    const ended = () => {
      if (rebuilding.holding) this.owner.release();
    };
    rebuilding.done = rebuildScreen(this.deps.store, this.owner.record(), this.makeScreen).then(
      ({ screen: fresh, through }) => {
        // Let go of meanwhile (disposed, or another emulator installed): this one is not needed.
        if (this.phase !== rebuilding) {
          fresh.dispose();
          return ended();
        }
        for (const h of rebuilding.held) {
          if (h.sequence <= through) continue;
          if ('data' in h) fresh.write(h.data, h.sequence);
          else fresh.resize(h.cols, h.rows, h.sequence);
        }
        // install() may start the next rebuild (the screen broke while being rebuilt).
        this.install(fresh);
        ended();
      },
      (e: unknown) => {
        this.deps.logger.log('error', 'screen model could not be rebuilt from the log', { session: this.sessionId, error: e });
        if (this.phase === rebuilding) this.phase = { state: 'none' };
        ended();
      },
    );
    this.phase = rebuilding;
  }

  /** The process has ended: no more periodic keyframes. */
  stop(): void {
    this.cadence.stop();
  }

  dispose(): void {
    this.cadence.stop();
    if (this.phase.state === 'ready') this.phase.screen.dispose();
    this.phase = { state: 'disposed' };
  }

  /**
   * A periodic Keyframe, logged right where the cadence says. It holds PTY events only for the
   * emulator's answer, not until the emulator has caught up: its anchor is the last frame the
   * emulator had parsed, which may be older than the Output frames before it.
   */
  private cutPeriodic(): void {
    if (this.phase.state !== 'ready' || this.cutting) return;
    const screen = this.phase.screen;
    this.owner.hold();
    this.cutting = this.timed('periodic', screen, true).then(
      (snap) => {
        this.cutting = null;
        this.owner.logged(snap);
        this.owner.release();
      },
      (e: unknown) => {
        this.cutting = null;
        this.deps.logger.log('error', 'keyframe failed', { session: this.sessionId, error: e });
        this.owner.release();
      },
    );
  }

  private async timed(occasion: string, screen: Screen, now: boolean): Promise<ScreenSnapshot> {
    const t0 = this.deps.clock.now();
    const snap = await (now ? screen.snapshotNow() : screen.snapshot());
    this.deps.metrics.inc('keyframes_total', { occasion });
    this.deps.metrics.observe('keyframe_build_seconds', (this.deps.clock.now() - t0) / 1000, { occasion });
    return snap;
  }
}
