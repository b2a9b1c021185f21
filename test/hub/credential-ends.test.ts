// CredentialEnds (src/hub/credential-ends.ts): what is held for a principal ends when its credential
// expires (a token map entry's expires_at, a JWT's exp, a share's expires_at: any Principal.expiresAt)
// or is revoked, whatever kind of connection it is; what was released is left alone.
import { describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../src/auth/principal.ts';
import { BindingError } from '../../src/protocol/errors.ts';
import { CredentialEnds, type CredentialBound } from '../../src/hub/credential-ends.ts';
import { FakeClock, silentLogger } from './fakes.ts';

const conn = (clientId: string) => {
  const ended: BindingError[] = [];
  const c: CredentialBound = { clientId, end: (err) => void ended.push(err) };
  return { c, ended };
};

describe('CredentialEnds', () => {
  it('ends a held connection when its principal expires, and not one released before', () => {
    vi.useFakeTimers();
    try {
      const clock = new FakeClock();
      const ends = new CredentialEnds({ clock, logger: silentLogger });
      const p: Principal = { id: 'jwt-user', scopes: new Set(['pty:observe']), expiresAt: clock.t + 2000 };
      const [a, b] = [conn('a'), conn('b')];
      ends.hold(p, a.c, silentLogger);
      const releaseB = ends.hold(p, b.c, silentLogger);
      releaseB();
      clock.t += 2000;
      vi.advanceTimersByTime(2000);
      expect(a.ended.map((e) => [e.code, e.fatal])).toEqual([['UNAUTHENTICATED', true]]);
      expect(a.ended[0]!.message).toMatch(/expired/);
      expect(b.ended).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('endAll ends every connection held for that principal only, and counts them', () => {
    const ends = new CredentialEnds({ clock: new FakeClock(), logger: silentLogger });
    const share: Principal = { id: 'share:s1', scopes: new Set(['pty:observe']) };
    const other: Principal = { id: 'alice', scopes: new Set(['pty:control']) };
    const [x, y, z] = [conn('x'), conn('y'), conn('z')];
    ends.hold(share, x.c, silentLogger);
    ends.hold(share, y.c, silentLogger);
    ends.hold(other, z.c, silentLogger);
    const revoked = new BindingError('UNAUTHENTICATED', 'the share link of this connection was revoked', { fatal: true });
    expect(ends.endAll('share:s1', revoked)).toBe(2);
    expect([...x.ended, ...y.ended].map((e) => e.message)).toEqual(['the share link of this connection was revoked', 'the share link of this connection was revoked']);
    expect(z.ended).toEqual([]);
    expect(ends.endAll('nobody', revoked)).toBe(0);
  });
});
