// The replay cache's budget (storage/recent-log.ts) is what it really holds: kept frames are
// charged their objects as well as their bytes, so a budget of 8 MiB of small frames is about
// 8 MiB of heap, not eight times that. Measured with the real objects, after a full GC.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { uuidv7 } from '../../src/core/ids.ts';
import { OutputFrame, outputEntry } from '../../src/protocol/output-frame.ts';
import { RecentLog } from '../../storage/recent-log.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const held = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

describe('the replay cache budget', () => {
  for (const size of [8, 200, 4000]) {
    it(`${size}-byte frames: what it keeps within its budget is within 1.25x of the budget in heap`, () => {
      const budget = 8 * 1024 * 1024;
      const before = held();
      const recent = new RecentLog({ perSession: budget, total: budget });
      // More than the budget holds even when an entry is charged only its bytes and a little.
      const frames = 1000 * Math.ceil(budget / (size + 141) / 1000 + 1);
      for (let start = 1; start <= frames; start += 1000) {
        const batch = [];
        for (let n = start; n < start + 1000; n++) {
          // As a live frame is made: the bytes behind room for the PW1O head (src/hub/gathered-output.ts).
          const data = new Uint8Array(13 + size).subarray(13);
          batch.push(outputEntry('s', new OutputFrame(uuidv7(1_700_000_000_000 + n), n, 1_700_000_000_000 + n, data)));
        }
        recent.committed(batch);
      }
      const grown = held() - before;
      // Still serving (and so still holding) its newest frames.
      expect(recent.after('s', frames - 1)?.length).toBe(1);
      expect(grown).toBeLessThan(1.25 * budget);
    });
  }
});
