// Unit tests of the edge's small pure modules (docs/security.md, attacks 7–8): the frame-rate
// bucket, the failed-authentication throttle, the cross-session field walk, the JWT shape test and
// which remote addresses count as one client.
import { describe, expect, it } from 'vitest';
import { addressGroup } from '../../src/core/address-group.ts';
import { AuthFailureThrottle } from '../../src/auth/auth-throttle.ts';
import { isJwtShaped } from '../../src/auth/authenticator.ts';
import { FrameRateLimiter, type FrameVerdict } from '../../src/hub/frame-rate.ts';
import { foreignSessionField } from '../../src/protocol/session-refs.ts';

describe('FrameRateLimiter', () => {
  const limits = { perSecond: 10, burst: 20, strikesToClose: 3 };

  it('accepts the burst, then refills at the rate', () => {
    const r = new FrameRateLimiter(limits, 0);
    const first = Array.from({ length: 20 }, () => r.take(0));
    expect(first.every((v) => v === 'accept')).toBe(true);
    expect(r.take(0)).toBe('warn');
    expect(r.take(0)).toBe('drop');
    expect(r.take(100)).toBe('accept'); // 100 ms = one frame's worth
    expect(r.take(100)).toBe('drop');
  });

  it('closes after strikesToClose seconds of flooding in a row, and forgives a pause', () => {
    const flood = (r: FrameRateLimiter, from: number, ms: number): FrameVerdict[] => {
      const out: FrameVerdict[] = [];
      for (let t = from; t < from + ms; t += 5) for (let i = 0; i < 5; i++) out.push(r.take(t));
      return out;
    };
    const r = new FrameRateLimiter(limits, 0);
    // Strikes in the seconds starting at ~0, ~1000 and ~2000 ms: the third one closes.
    const a = flood(r, 0, 1500);
    expect(a.filter((v) => v === 'warn')).toHaveLength(2);
    expect(a).not.toContain('close');
    expect(flood(r, 1500, 1000)).toContain('close');

    const paused = new FrameRateLimiter(limits, 0);
    flood(paused, 0, 1500);
    expect(flood(paused, 5000, 1500)).not.toContain('close');
  });
});

describe('AuthFailureThrottle', () => {
  it('throttles after the burst until the oldest failure leaves the window', () => {
    let now = 0;
    const t = new AuthFailureThrottle({ burst: 3, windowMs: 1000 }, () => now);
    for (const at of [0, 100, 200]) {
      expect(t.retryAfterMs('a')).toBe(0);
      now = at;
      t.failed('a');
    }
    expect(t.retryAfterMs('a')).toBe(800);
    expect(t.retryAfterMs('b')).toBe(0);
    now = 1000;
    expect(t.retryAfterMs('a')).toBe(0);
  });
});

describe('foreignSessionField', () => {
  it('finds another session under any of its names at any depth, and lets the own one pass', () => {
    expect(foreignSessionField({ filter: { status: 'x', contextId: 'B' } }, 'A')).toBe('payload.filter.contextId');
    expect(foreignSessionField({ message: { parts: [{ data: { session_id: 'B' } }] } }, 'A')).toBe('payload.message.parts[0].data.session_id');
    expect(foreignSessionField({ context_id: 'A', sessionId: 'A', filter: null }, 'A')).toBeNull();
    expect(foreignSessionField({ session_id: 7 }, 'A')).toBe('payload.session_id');
  });
});

describe('isJwtShaped', () => {
  it('is true for a JOSE header first segment only', () => {
    expect(isJwtShaped('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toBe(true);
    expect(isJwtShaped('a.b.c')).toBe(false);
    expect(isJwtShaped('eyJ4IjoxfQ.e30.')).toBe(false); // {"x":1}: no alg
  });
});

describe('addressGroup', () => {
  it('keeps an IPv4 address (also IPv4-mapped) and groups IPv6 by /64', () => {
    expect(addressGroup('203.0.113.7')).toBe('203.0.113.7');
    expect(addressGroup('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressGroup('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressGroup('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressGroup('::1')).toBe('0:0:0:0::/64');
    expect(addressGroup('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });

  it('leaves anything that is no address as it is', () => {
    for (const s of ['', 'unix', '1::2::3', '1:2:3', 'g::1', '1:2:3:4:5:6:7:8:9']) expect(addressGroup(s)).toBe(s);
  });
});
