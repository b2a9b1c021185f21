// The Node adapter's screen worker: what it is handed stays the caller's.
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerScreens } from '../../src/adapter/node/worker-screens.ts';
import type { Logger } from '../../src/ports/logger.ts';

const quiet: Logger = { log: () => undefined, child: () => quiet };
const screens = new WorkerScreens(quiet);
afterAll(() => screens.close());

describe('WorkerScreens', () => {
  it('leaves the memory around written bytes alone (PTY host output arrives as Buffer views into one socket read)', async () => {
    // Its own ArrayBuffer, like a socket read (Buffer.from(string) would use the untransferable pool).
    const read = Buffer.from(new TextEncoder().encode('first-frame|second-frame').buffer);
    const first = read.subarray(0, 11);
    const second = read.subarray(12);
    const screen = screens.create(40, 5);
    screen.write(first, 1);
    expect(second.toString()).toBe('second-frame');
    screen.write(second, 2);
    const snap = await screen.snapshot();
    expect(snap.anchor).toBe(2);
    expect(snap.snapshot).toContain('first-framesecond-frame');
  });

  // Small writes are held for a moment and sent together (worker-screens.ts): nothing about a
  // screen may overtake them, and they must not wait for a snapshot to be sent.
  describe('small writes held back', () => {
    it('a snapshot includes every write before it, anchored at the last', async () => {
      const screen = screens.create(40, 5);
      for (let i = 1; i <= 5; i++) screen.write(new TextEncoder().encode(`k${i} `), i);
      const snap = await screen.snapshot();
      expect(snap.anchor).toBe(5);
      expect(snap.snapshot).toContain('k1 k2 k3 k4 k5');
    });

    it('a resize comes after the writes before it', async () => {
      const screen = screens.create(40, 5);
      screen.write(new TextEncoder().encode('before'), 1);
      screen.resize(30, 5, 2);
      // Past the hold: a write sent late would now land after the resize.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const snap = await screen.snapshot();
      expect(snap.anchor).toBe(2);
      expect(snap.cols).toBe(30);
      expect(snap.snapshot).toContain('before');
    });

    it('a large write goes after the small ones held before it', async () => {
      const screen = screens.create(40, 200);
      screen.write(new TextEncoder().encode('small|'), 1);
      screen.write(new TextEncoder().encode('L'.repeat(5000)), 2);
      const snap = await screen.snapshot();
      expect(snap.anchor).toBe(2);
      expect(snap.snapshot).toMatch(/small\|L{34}/);
    });

    it('goes to the worker by itself, without a snapshot asking', async () => {
      let parsed = 0;
      const screen = screens.create(40, 5, (bytes) => (parsed += bytes));
      screen.write(new TextEncoder().encode('typed'), 1);
      expect(screen.backlog()).toBe(5);
      await expect.poll(() => parsed, { timeout: 2000 }).toBe(5);
      expect(screen.backlog()).toBe(0);
    });

    it('counts as parsed once the worker is gone', async () => {
      const own = new WorkerScreens(quiet);
      let parsed = 0;
      const screen = own.create(40, 5, (bytes) => (parsed += bytes));
      screen.write(new TextEncoder().encode('held'), 1);
      await own.close();
      await expect.poll(() => parsed, { timeout: 2000 }).toBe(4);
      await expect(screen.snapshot()).rejects.toThrow(/screen worker/);
    });
  });
});
