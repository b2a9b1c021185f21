// An Output frame's JSON is written out directly (src/protocol/output-frame.ts) for speed: it must
// stay the very text the generic builder makes, so a replayed frame is the one sent live.
import { describe, expect, it } from 'vitest';
import { ptyFrameJson } from '../../src/protocol/frames.ts';
import { OutputFrame } from '../../src/protocol/output-frame.ts';

describe('an Output frame as JSON', () => {
  it('is what ptyFrameJson makes of it, byte for byte', () => {
    const cases: Array<[string, number, number, Uint8Array]> = [
      ['0190f5a0-0000-7000-8000-0000000000aa', 1, 1_000_000, Uint8Array.from({ length: 256 }, (_, i) => i)],
      ['0190f5a0-0000-7000-8000-0000000000ab', 9_007_199_254_740_991, Date.UTC(2026, 11, 3, 23, 59, 59, 999), new Uint8Array()],
      // An id from a damaged or hostile row is still quoted, not spliced in.
      ['a"b\\c\u2028', 42, 0, new TextEncoder().encode('é\r\n')],
    ];
    for (const [id, sequence, at, data] of cases) {
      const json = new OutputFrame(id, sequence, at, data).json;
      expect(json).toBe(ptyFrameJson({ kind: 'Output', stream: 'stdout', data: Buffer.from(data).toString('base64') }, sequence, at, id));
      expect(JSON.parse(json)).toMatchObject({ id, sequence, payload: { data: Buffer.from(data).toString('base64') } });
    }
  });
});
