// The Node adapter's screen worker: what it is handed stays the caller's.
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerScreens } from '../src/adapter/node/worker-screens.ts';
import type { Logger } from '../src/ports.ts';

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
});
