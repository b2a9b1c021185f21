// Interactive priority, a rate limit beside the credit loop (docs/protocol.md §9.3): the rest a
// session streaming output takes while someone types into another (pty/bulk-pacing.ts). The credit
// loop is test/pty-host/credit-loop.test.ts; what pacing buys is bench figure 10 (docs/performance.md).
import { describe, expect, it } from 'vitest';
import { BulkPacing } from '../../pty/bulk-pacing.ts';

const KiB = 1024;

describe('bulk pacing', () => {
  function paced() {
    let now = 1_000_000;
    const p = new BulkPacing(() => now);
    return { p, advance: (ms: number) => (now += ms) };
  }

  it('never paces while nobody types into another session', () => {
    const { p, advance } = paced();
    p.input('a'); // typing into the streaming session itself does not count
    for (let i = 0; i < 100; i++) {
      expect(p.output('a', 4 * KiB)).toBe(0);
      advance(0.1);
    }
  });

  it('a session streaming fast rests as long as it read while another session is typed into', () => {
    const { p, advance } = paced();
    p.input('b');
    const rests: number[] = [];
    // 4 KiB every 0.5 ms of reading: 8 MiB/s.
    for (let i = 0; i < 40; i++) {
      const rest = p.output('a', 4 * KiB);
      rests.push(rest);
      advance(rest + 0.5);
    }
    const taken = rests.filter((r) => r > 0);
    // A rest after every 16 KiB, as long as the reading before it (4 reads: 1.5–2 ms).
    expect(taken.length).toBeGreaterThanOrEqual(9);
    for (const r of taken) expect(r).toBeGreaterThanOrEqual(1.5);
    for (const r of taken) expect(r).toBeLessThanOrEqual(2);
  });

  it('does not pace a session printing slowly, nor once the typing is over 2 s old', () => {
    const { p, advance } = paced();
    p.input('b');
    // 1 KiB every 10 ms: 100 KiB/s, a busy but readable log.
    for (let i = 0; i < 100; i++) {
      expect(p.output('a', KiB)).toBe(0);
      advance(10);
    }
    advance(2001);
    for (let i = 0; i < 40; i++) {
      expect(p.output('a', 4 * KiB)).toBe(0);
      advance(0.5);
    }
  });

  it('rests at most 100 ms, and a pause in the output starts the measure afresh', () => {
    const { p, advance } = paced();
    p.input('b');
    p.output('a', 8 * KiB);
    advance(60); // a gap: what came before is not part of the next streak
    p.input('b');
    expect(p.output('a', 15 * KiB)).toBe(0);
    advance(1);
    expect(p.output('a', 2 * KiB)).toBe(1);
    // 200 KiB at once after ~150 ms of trickling (still one streak: no gap over 50 ms) is bulk; its rest is capped.
    advance(60);
    for (let i = 0; i < 3; i++) {
      expect(p.output('a', KiB)).toBe(0);
      advance(49);
    }
    expect(p.output('a', 200 * KiB)).toBe(100);
  });
});
