// A session whose screen model broke gets one rebuilt from the log (src/screen/session-screen.ts),
// over in-memory ports: what arrives during the rebuild is folded in after it, once; joins wait
// for it; a screen that keeps breaking is given up on.
import { describe, expect, it } from 'vitest';
import { SessionScreen } from '../../src/screen/session-screen.ts';
import { NO_METRICS } from '../../src/core/metrics.ts';
import { deferred, FakeClock, FakeScreen, Rig, silentLogger, turn } from './fakes.ts';

const keyframeText = (frames: Array<{ payload: Record<string, unknown> }>) => atob(String(frames.find((f) => f.payload.kind === 'Keyframe')!.payload.snapshot));

/** `read()` once it has not changed for ten turns (the session's queue hands on a frame a turn). */
async function settled(read: () => number): Promise<number> {
  let last = -1;
  for (let still = 0, i = 0; still < 10 && i < 1000; i++) {
    await turn();
    const now = read();
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return last;
}

describe('a broken screen model', () => {
  it('is rebuilt from the log; output and a resize during the rebuild follow it, once; a join waits for it', async () => {
    const rig = new Rig();
    const controller = await rig.join('controller');
    await rig.output('one ');
    expect(rig.screens).toHaveLength(1);

    const gate = deferred();
    rig.store.readGate = gate.promise;
    rig.screens[0]!.fail(new Error('emulator bug'));
    expect(rig.screens[0]!.disposed).toBe(true);
    await rig.output('two ');
    await rig.session.resize(controller.member, 90, 20);
    const joining = rig.join('observer');
    await turn();
    gate.resolve();
    rig.store.readGate = null;
    const { conn } = await joining;

    expect(rig.screens).toHaveLength(2);
    const rebuilt = rig.screens[1]!;
    expect(rebuilt.text).toBe('one two ');
    expect([rebuilt.cols, rebuilt.rows]).toEqual([90, 20]);
    expect(keyframeText(conn.frames())).toBe('one two ');
    await rig.output('three');
    expect(rebuilt.text).toBe('one two three');
  });

  it('holds the session\'s PTY events while a slow rebuild has 4 MiB held, and lets them go, all of them, once it is done', async () => {
    const rig = new Rig();
    const controller = await rig.join('controller');
    await rig.output('start ');
    const gate = deferred();
    rig.store.readGate = gate.promise;
    rig.screens[0]!.fail(new Error('emulator bug'));
    const chunk = 'x'.repeat(64 * 1024);
    // 6 MiB arrive from the host while the rebuild waits on the log: past 4 MiB they stay queued.
    for (let i = 0; i < 96; i++) rig.session.onOutput(new TextEncoder().encode(chunk));
    const outputBytes = () => controller.conn.frames().filter((f) => f.payload.kind === 'Output').reduce((n, f) => n + atob(String(f.payload.data)).length, 0);
    const whileHeld = await settled(outputBytes);
    expect(whileHeld).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    expect(whileHeld).toBeLessThan(5 * 1024 * 1024);
    gate.resolve();
    rig.store.readGate = null;
    expect(await settled(outputBytes)).toBe('start '.length + 96 * chunk.length);
    expect(rig.screens[1]!.text).toBe('start ' + chunk.repeat(96));
  });

  it('folds in a frame once when the rebuild read it from the log too', async () => {
    const rig = new Rig();
    await rig.join('controller');
    await rig.output('one ');
    // The rebuild waits before it reads the log: what arrives meanwhile is logged and held both.
    const gate = deferred();
    const lastFrameOfKind = rig.store.lastFrameOfKind.bind(rig.store);
    rig.store.lastFrameOfKind = async (id, kind) => (await gate.promise, lastFrameOfKind(id, kind));
    rig.screens[0]!.fail(new Error('emulator bug'));
    await rig.output('two ');
    gate.resolve();
    await rig.output('three');
    expect(rig.screens[1]!.text).toBe('one two three');
  });

  it('breaking again is rebuilt again, up to 3 times; then the session has no screen and a join gets KEYFRAME_UNAVAILABLE', async () => {
    const rig = new Rig();
    await rig.join('controller');
    await rig.output('text');
    for (let i = 0; i < 3; i++) {
      rig.screens.at(-1)!.fail(new Error(`bug ${i}`));
      await turn();
    }
    expect(rig.screens).toHaveLength(4);
    expect(rig.screens[3]!.text).toBe('text');
    rig.screens[3]!.fail(new Error('bug 3'));
    await turn();
    expect(rig.screens).toHaveLength(4);
    const { conn } = await rig.join('observer');
    expect(conn.frames().map((f) => f.payload.code ?? f.payload.kind)).toContain('KEYFRAME_UNAVAILABLE');
    // The session streams on without a screen.
    await rig.output(' more');
    expect(conn.frames().at(-1)!.payload.kind).toBe('Output');
  });

  it('a failure of a screen already replaced (or of a session disposed) changes nothing', async () => {
    const rig = new Rig();
    await rig.join('controller');
    await rig.output('x');
    const first = rig.screens[0]!;
    first.fail(new Error('once'));
    await turn();
    first.fail(new Error('twice'));
    await turn();
    expect(rig.screens).toHaveLength(2);
    expect(rig.screens[1]!.disposed).toBe(false);
  });

  it('a session whose first start failed and that started later still has its broken screen rebuilt', async () => {
    const rig = new Rig();
    rig.pty.spawnFailure = { code: 'spawn_failed', message: 'no luck' };
    await expect(rig.join('controller')).rejects.toThrow(/could not start/);
    expect(rig.screens[0]!.disposed).toBe(true);
    rig.pty.spawnFailure = null;
    await rig.join('controller');
    await rig.output('after');
    rig.screens[1]!.fail(new Error('emulator bug'));
    await turn();
    expect(rig.screens).toHaveLength(3);
    expect(rig.screens[2]!.text).toBe('after');
    expect((await rig.session.screen.snapshot('request'))!.snapshot).toBe('after');
  });

  it("a rebuild from the log (of a retired session too) keeps one screen when two ask at once, and one that broke while being rebuilt is rebuilt again", async () => {
    const rig = new Rig();
    await rig.join('controller');
    await rig.output('kept');
    const made: FakeScreen[] = [];
    let breakNext = false;
    const screen = new SessionScreen(
      rig.record.id,
      { clock: new FakeClock(), metrics: NO_METRICS, logger: silentLogger, store: rig.store, config: rig.config },
      (cols, rows, _onParsed, onFailed) => {
        const s = new FakeScreen(cols, rows, onFailed);
        if (breakNext) {
          breakNext = false;
          const write = s.write.bind(s);
          s.write = (data, sequence) => (write(data, sequence), s.fail(new Error('broke while rebuilt')));
        }
        made.push(s);
        return s;
      },
      { hold: () => undefined, release: () => undefined, logged: () => undefined, record: () => rig.record },
    );
    // Retired first, as a join of an ended session can find it: the join still gets its screen.
    screen.dispose();
    await Promise.all([screen.ensureRebuilt(), screen.ensureRebuilt()]);
    expect(made.map((s) => s.disposed)).toEqual([false, true]);
    made[0]!.fail(new Error('bug'));
    breakNext = true;
    await turn();
    await turn();
    expect(made).toHaveLength(4);
    expect(made[2]!.disposed).toBe(true);
    expect(made[3]!.text).toBe('kept');
    expect((await screen.snapshot('join'))!.snapshot).toBe('kept');
  });
});
