// A screen model whose emulator throws (a bug of @xterm/headless that a byte stream or a resize
// reaches) fails alone: in process, in the screen worker, and through the real router, where the
// session's screen is rebuilt from the log and its next Keyframe is whole (src/screen/session-screen.ts).
import xterm from '@xterm/headless';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { WorkerScreens } from '../../src/adapter/node/worker-screens.ts';
import { ScreenModel } from '../../src/screen/screen.ts';
import type { Logger } from '../../src/ports/logger.ts';
import type { Screen } from '../../src/ports/screen.ts';
import type { ScreenService } from '../../src/router/router.ts';
import { b64, TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const quiet: Logger = { log: () => undefined, child: () => quiet };
const bytes = (s: string) => new TextEncoder().encode(s);
const E = '\x1b';

/** Makes the model's terminal throw at `ESC [ z`, as an emulator bug would, from inside xterm's own parse. */
function planted(model: ScreenModel): void {
  const term = (model as unknown as { term: InstanceType<typeof xterm.Terminal> }).term;
  term.parser.registerCsiHandler({ final: 'z' }, () => {
    throw new Error('emulator bug');
  });
}

describe('in process', () => {
  it('an exception while xterm parses its queue (its own timer) breaks that screen alone: its snapshots fail, nothing escapes', async () => {
    const failures: string[] = [];
    const model = new ScreenModel(40, 5, undefined, { onFailed: (e) => failures.push(e.message) });
    planted(model);
    const other = new ScreenModel(40, 5);
    model.write(bytes(`${E}[1mbold ${E}[z`), 1);
    const waiting = model.snapshot();
    await expect(waiting).rejects.toThrow('emulator bug');
    expect(failures).toEqual(['emulator bug']);
    await expect(model.snapshot()).rejects.toThrow('emulator bug');
    await expect(model.snapshotNow()).rejects.toThrow('emulator bug');
    model.write(bytes('more'), 2);
    model.resize(30, 5, 3);
    model.dispose();
    expect(failures).toHaveLength(1);
    other.write(bytes(`${E}[1mfine`), 1);
    expect((await other.snapshot()).snapshot).toContain('fine');
  });

  it('an exception in a call (a resize xterm refuses) breaks it the same way', async () => {
    const failures: string[] = [];
    const model = new ScreenModel(40, 5, undefined, { onFailed: (e) => failures.push(e.message) });
    model.write(bytes('text'), 1);
    model.resize(1.5, 2, 2);
    expect(failures).toEqual(['This API only accepts integers']);
    await expect(model.snapshot()).rejects.toThrow('This API only accepts integers');
  });
});

describe('in the screen worker', () => {
  const screens = new WorkerScreens(quiet);
  afterAll(() => screens.close());

  it('a screen that throws fails alone: its owner hears why, its snapshots fail, its bytes count as parsed, the others go on', async () => {
    const failures: string[] = [];
    const causes: unknown[] = [];
    let parsed = 0;
    const bad = screens.create(40, 5, (n) => (parsed += n), (e) => {
      failures.push(e.message);
      causes.push(e.cause);
    });
    const good = screens.create(40, 5);
    bad.write(bytes(`${E}[1m${'x'.repeat(5000)}`), 1);
    bad.resize(1.5, 2, 2);
    await expect(bad.snapshot()).rejects.toThrow(/screen model failed: This API only accepts integers/);
    expect(failures).toEqual(['the screen model failed: This API only accepts integers']);
    // Its cause is the error the worker caught, with the worker's stack: what the log line shows.
    expect(causes[0]).toBeInstanceOf(Error);
    expect((causes[0] as Error).stack).toMatch(/This API only accepts integers\n\s+at .*xterm/);
    expect(parsed).toBe(5004);
    bad.write(bytes('later'), 3);
    expect(parsed).toBe(5009);
    good.write(bytes('still here'), 1);
    expect((await good.snapshot()).snapshot).toContain('still here');
  });
});

describe('a screen worker that dies', () => {
  /** Ends the worker as a crash would (not by close()). */
  const crash = (s: WorkerScreens) => (s as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();

  it('fails every screen (their owners rebuild them) and is started again; one dying again within a minute is not', async () => {
    let now = 1_000_000;
    const screens = new WorkerScreens(quiet, () => now);
    try {
      const failures: string[] = [];
      const a = screens.create(40, 5, undefined, (e) => failures.push(`a: ${e.message}`));
      const b = screens.create(40, 5, undefined, (e) => failures.push(`b: ${e.message}`));
      a.write(bytes('a'), 1);
      b.write(bytes('b'), 1);
      await crash(screens);
      await expect.poll(() => failures.length).toBe(2);
      expect(failures).toEqual([expect.stringMatching(/^a: the screen worker stopped \(exit code \d+\)$/), expect.stringMatching(/^b: the screen worker stopped/)]);
      await expect(a.snapshot()).rejects.toThrow(/screen worker stopped/);

      const again = screens.create(40, 5);
      again.write(bytes('on the new worker'), 1);
      expect((await again.snapshot()).snapshot).toContain('on the new worker');

      now += 30_000;
      await crash(screens);
      const late = screens.create(40, 5);
      await expect(late.snapshot()).rejects.toThrow(/screen worker stopped/);
    } finally {
      await screens.close();
    }
  });
});

describe('through the router', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it("a session whose screen model throws gets one rebuilt from the log: its next Keyframe has what came before and after; another session's is untouched", async () => {
    const made: Array<{ cols: number; rows: number; screen: Screen }> = [];
    const decorate = (real: ScreenService): ScreenService => ({
      create: (cols, rows, onParsed, onFailed) => {
        const screen = real.create(cols, rows, onParsed, onFailed);
        made.push({ cols, rows, screen });
        return screen;
      },
      close: () => real.close(),
    });
    server = await startTestServer({}, {}, { decorateScreens: decorate });
    const token = server.devToken;
    const a = await server.createSession({ argv: ['/bin/cat'], terminal_size: { cols: 77, rows: 21 } });
    const b = await server.createSession({ argv: ['/bin/cat'], terminal_size: { cols: 66, rows: 11 } });
    const ca = await TestClient.connect(a.attach_url, { token });
    await ca.join({ role: 'controller' });
    const cb = await TestClient.connect(b.attach_url, { token });
    await cb.join({ role: 'controller' });
    ca.send('pty.session_input', { data: b64(`${E}[1mbefore-the-break\n`) });
    await ca.waitForOutput('before-the-break');

    // A's emulator in the worker throws (xterm refuses a size no client can ask for).
    const mine = made.filter((m) => m.cols === 77 && m.rows === 21);
    expect(mine).toHaveLength(1);
    mine[0]!.screen.resize(1.5, 2, 1);
    await ca.waitFor(() => made.filter((m) => m.cols === 77).length === 2, "A's screen to be rebuilt");

    ca.send('pty.session_input', { data: b64('after-the-break\n') });
    await ca.waitForOutput('after-the-break');
    const late = await TestClient.connect(a.attach_url, { token });
    const frames = await late.join({ role: 'observer' });
    expect(frames.at(-1)!.payload.kind).toBe('Keyframe');
    expect(late.screen()).toContain('before-the-break');
    expect(late.screen()).toContain('after-the-break');

    cb.send('pty.session_input', { data: b64('b-is-fine\n') });
    await cb.waitForOutput('b-is-fine');
    const lateB = await TestClient.connect(b.attach_url, { token });
    expect((await lateB.join({ role: 'observer' })).at(-1)!.payload.kind).toBe('Keyframe');
    expect(lateB.screen()).toContain('b-is-fine');
    expect(made.filter((m) => m.cols === 66)).toHaveLength(1);

    const metrics = await (await fetch(`${server.origin}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(metrics).toMatch(/pty_ws_screen_failures_total 1\b/);
    for (const c of [ca, cb, late, lateB]) c.close();
  });

  it('after the screen worker died, every session gets its screen rebuilt on a new one', async () => {
    let service: ScreenService | undefined;
    server = await startTestServer({}, {}, { decorateScreens: (real) => (service = real) });
    const token = server.devToken;
    const a = await server.createSession({ argv: ['/bin/cat'], terminal_size: { cols: 70, rows: 20 } });
    const ca = await TestClient.connect(a.attach_url, { token });
    await ca.join({ role: 'controller' });
    ca.send('pty.session_input', { data: b64(`${E}[1mbefore-the-crash\n`) });
    await ca.waitForOutput('before-the-crash');

    await (service as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    ca.send('pty.session_input', { data: b64('after-the-crash\n') });
    await ca.waitForOutput('after-the-crash');
    const late = await TestClient.connect(a.attach_url, { token });
    expect((await late.join({ role: 'observer' })).at(-1)!.payload.kind).toBe('Keyframe');
    expect(late.screen()).toContain('before-the-crash');
    expect(late.screen()).toContain('after-the-crash');
    for (const c of [ca, late]) c.close();
  });
});
