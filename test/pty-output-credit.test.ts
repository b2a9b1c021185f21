// The PTY host's two per-session output limits as modules (docs/protocol.md §9.3): the credit a
// router's window gives each session (pty/output-credit.ts), and the rest a session streaming
// output takes while someone types into another (pty/bulk-pacing.ts). The real host with them is
// test/pty-host-window.test.ts; what they buy is bench figure 10 (docs/performance.md).
import { describe, expect, it } from 'vitest';
import { BulkPacing } from '../pty/bulk-pacing.ts';
import { OutputCredit } from '../pty/output-credit.ts';

const KiB = 1024;

describe('output credit', () => {
  it('runs out past the window and comes back at half of it', () => {
    const c = new OutputCredit();
    expect(c.setWindow(100 * KiB)).toBe(false);
    expect(c.sent('a', 1, 64 * KiB)).toBe(false);
    expect(c.sent('a', 2, 64 * KiB)).toBe(true);
    expect(c.exhausted('a')).toBe(true);
    expect(c.anyExhausted).toBe(true);
    // 64 KiB left unacknowledged is above half the window: still out.
    expect(c.acked('a', 1)).toBe(false);
    expect(c.exhausted('a')).toBe(true);
    expect(c.acked('a', 2)).toBe(true);
    expect(c.exhausted('a')).toBe(false);
  });

  it('is per session', () => {
    const c = new OutputCredit();
    c.setWindow(10 * KiB);
    c.sent('a', 1, 20 * KiB);
    c.sent('b', 2, 1 * KiB);
    expect(c.exhausted('a')).toBe(true);
    expect(c.exhausted('b')).toBe(false);
    // Acknowledging b's event frees nothing of a's.
    c.acked('b', 2);
    expect(c.exhausted('a')).toBe(true);
  });

  it('without a window never runs out, and dropping the window frees every session', () => {
    const c = new OutputCredit();
    expect(c.sent('a', 1, 10 * 1024 * KiB)).toBe(false);
    expect(c.setWindow(KiB)).toBe(true);
    expect(c.exhausted('a')).toBe(true);
    expect(c.setWindow(undefined)).toBe(true);
    expect(c.exhausted('a')).toBe(false);
  });

  it('forgets an ended session', () => {
    const c = new OutputCredit();
    c.setWindow(KiB);
    c.sent('a', 1, 2 * KiB);
    c.forget('a');
    expect(c.exhausted('a')).toBe(false);
    expect(c.anyExhausted).toBe(false);
  });
});

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
