// ShareAuthenticator's check of the shares above a share (docs/sharing.md: a share minted with a
// share ends with it), against an in-memory ShareStore: a child whose revocation did not happen
// (minted while its parent's revocation was under way) is refused all the same. And of its root
// minter's token, which must still authenticate with the share's scope on its session.
import { describe, expect, it } from 'vitest';
import type { Authenticator } from '../../src/auth/authenticator.ts';
import type { Principal } from '../../src/auth/principal.ts';
import { sha256Hex } from '../../src/core/ids.ts';
import type { ShareRecord, ShareStore } from '../../src/ports/share-store.ts';
import { SHARE_TOKEN_PREFIX } from '../../src/protocol/share-info.ts';
import { ShareAuthenticator, sharePrincipalId } from '../../src/shares/share-authenticator.ts';

const NOW = Date.parse('2026-12-04T12:00:00Z');
const later = new Date(NOW + 3600_000).toISOString();
const base: Authenticator = { enforced: true, authenticate: () => Promise.reject(new Error('not a share')) };

async function share(id: string, createdBy: string, revoked = false): Promise<ShareRecord & { token: string }> {
  const token = `${SHARE_TOKEN_PREFIX}${id}-token`;
  return { id, token, sessionId: 's1', instanceId: 'i1', tokenSha256: await sha256Hex(token), scope: 'pty:control', label: null, createdBy, minterTokenSha256: null, createdAt: new Date(NOW).toISOString(), expiresAt: later, revokedAt: revoked ? new Date(NOW).toISOString() : null };
}

function store(records: ShareRecord[]): ShareStore {
  return {
    create: () => Promise.resolve(),
    byTokenHash: (h) => Promise.resolve(records.find((r) => r.tokenSha256 === h)),
    byId: (id) => Promise.resolve(records.find((r) => r.id === id)),
    listActive: () => Promise.resolve([]),
    revoke: () => Promise.resolve(false),
    listInstanceActive: () => Promise.resolve([]),
  };
}

describe('a share minted with a share', () => {
  it('holds while every share above it holds, and is refused once one of them is revoked or gone', async () => {
    const pair = await share('p', 'alice');
    const child = await share('c', sharePrincipalId('p'));
    const grandchild = await share('g', sharePrincipalId('c'));
    const auth = (records: ShareRecord[]) => new ShareAuthenticator(base, store(records), { now: () => NOW }, 'i1');
    await expect(auth([pair, child, grandchild]).authenticate(grandchild.token)).resolves.toMatchObject({ id: 'share:g' });
    const revokedPair = { ...pair, revokedAt: new Date(NOW).toISOString() };
    await expect(auth([revokedPair, child, grandchild]).authenticate(grandchild.token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/minted with was revoked/) });
    await expect(auth([revokedPair, child]).authenticate(child.token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(auth([child, grandchild]).authenticate(grandchild.token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/gone/) });
    await expect(auth([pair, child]).authenticate(pair.token)).resolves.toMatchObject({ id: 'share:p' });
  });
});

describe("a share minted with a token the server can check again (token map, dev token)", () => {
  it("holds while that token authenticates with the share's scope on its session; its children stand on the same token", async () => {
    const pair = { ...(await share('p', 'alice')), minterTokenSha256: 'a'.repeat(64) };
    const child = { ...(await share('c', sharePrincipalId('p'))), minterTokenSha256: pair.minterTokenSha256 };
    const jwtMinted = await share('j', 'jay');
    const withRoot = (root: Principal | undefined) => {
      const checked: Authenticator = { ...base, byTokenSha256: (h) => Promise.resolve(h === pair.minterTokenSha256 ? root : undefined) };
      return new ShareAuthenticator(checked, store([pair, child, jwtMinted]), { now: () => NOW }, 'i1');
    };
    const alice: Principal = { id: 'alice', scopes: new Set(['pty:control']) };
    await expect(withRoot(alice).authenticate(child.token)).resolves.toMatchObject({ id: 'share:c', tokenSha256: pair.minterTokenSha256 });
    for (const gone of [withRoot(undefined), withRoot({ ...alice, scopes: new Set(['pty:observe']) }), withRoot({ ...alice, sessions: new Set(['s2']) })]) {
      for (const s of [pair, child]) await expect(gone.authenticate(s.token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/minted with no longer/) });
      expect(await gone.holds(pair)).toBe(false);
      // A share whose minter had no such token (a JWT) is bounded by its expiry alone.
      await expect(gone.authenticate(jwtMinted.token)).resolves.toMatchObject({ id: 'share:j' });
    }
  });
});
