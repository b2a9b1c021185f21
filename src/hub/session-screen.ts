// One session's screen model and keyframes (docs/protocol.md §6.3): the emulator every Output byte
// is folded into, the snapshots cut from it (timed, for the metrics), and the periodic cadence.
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { Clock, Logger, Screen, ScreenFactory, ScreenSnapshot, SessionRecord, Store } from '../ports.ts';
import { KeyframeCadence } from './keyframe-cadence.ts';
import { rebuildScreen } from './screen-rebuild.ts';

export interface SessionScreenDeps {
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  store: Store;
  config: Pick<Config, 'keyframeIntervalFrames' | 'keyframeIntervalSeconds'>;
}

/** What a periodic cut needs of the session: its PTY events held meanwhile, and the Keyframe logged. */
export interface PeriodicCut {
  hold(): void;
  release(): void;
  /** Logs the periodic Keyframe, unless the session has ended meanwhile. */
  logged(snap: ScreenSnapshot): void;
}

export class SessionScreen {
  private screen: Screen | null;
  private readonly cadence: KeyframeCadence;
  /** The periodic cut under way, if any: at most one at a time. */
  private cutting: Promise<void> | null = null;

  constructor(
    private readonly sessionId: string,
    private readonly deps: SessionScreenDeps,
    private readonly makeScreen: ScreenFactory,
    screen: Screen | null,
    private readonly cut: PeriodicCut,
  ) {
    this.screen = screen;
    this.cadence = new KeyframeCadence(deps.config.keyframeIntervalFrames, deps.config.keyframeIntervalSeconds, () => this.cutPeriodic());
  }

  get exists(): boolean {
    return this.screen !== null;
  }

  /** A fresh emulator at this size (made before the process starts, so its first bytes are folded in). */
  create(cols: number, rows: number): void {
    this.screen = this.makeScreen(cols, rows);
  }

  /** An emulator if there is none yet (a session adopted from the PTY host). */
  ensure(cols: number, rows: number): void {
    this.screen ??= this.makeScreen(cols, rows);
  }

  /** A retired session's last screen, rebuilt from the log for a join of it. */
  async ensureRebuilt(record: SessionRecord): Promise<void> {
    this.screen ??= await rebuildScreen(this.deps.store, record, this.makeScreen);
  }

  /** Folds in the bytes of the Output frame numbered `sequence`, and counts it for the cadence. */
  output(data: Uint8Array, sequence: number): void {
    this.screen?.write(data, sequence);
    this.cadence.onOutput();
  }

  resize(cols: number, rows: number, sequence: number): void {
    this.screen?.resize(cols, rows, sequence);
  }

  /** The screen after everything written so far; null when there is none. */
  snapshot(occasion: 'join' | 'request' | 'lag'): Promise<ScreenSnapshot> | null {
    return this.screen ? this.timed(occasion, this.screen, false) : null;
  }

  /** The process has ended: no more periodic keyframes. */
  stop(): void {
    this.cadence.stop();
  }

  dispose(): void {
    this.cadence.stop();
    this.screen?.dispose();
    this.screen = null;
  }

  /**
   * A periodic Keyframe, logged right where the cadence says. It holds PTY events only for the
   * emulator's answer, not until the emulator has caught up: its anchor is the last frame the
   * emulator had parsed, which may be older than the Output frames before it.
   */
  private cutPeriodic(): void {
    const screen = this.screen;
    if (!screen || this.cutting) return;
    this.cut.hold();
    this.cutting = this.timed('periodic', screen, true).then(
      (snap) => {
        this.cutting = null;
        this.cut.logged(snap);
        this.cut.release();
      },
      (e: unknown) => {
        this.cutting = null;
        this.deps.logger.log('error', 'keyframe failed', { session: this.sessionId, error: String(e) });
        this.cut.release();
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
