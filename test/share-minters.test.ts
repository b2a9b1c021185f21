// ShareAuthenticator's check of the shares above a share (docs/sharing.md: a share minted with a
// share ends with it), against an in-memory ShareStore: a child whose revocation did not happen
// (minted while its parent's revocation was under way) is refused all the same.
import { describe, expect, it } from 'vitest';
import type { Authenticator } from '../src/auth/authenticator.ts';
import { sha256Hex } from '../src/ids.ts';
import type { ShareRecord, ShareStore } from '../src/ports.ts';
import { SHARE_TOKEN_PREFIX } from '../src/protocol/share-info.ts';
import { ShareAuthenticator, sharePrincipalId } from '../src/shares/share-authenticator.ts';

const NOW = Date.parse('2026-12-04T12:00:00Z');
const later = new Date(NOW + 3600_000).toISOString();
const base: Authenticator = { enforced: true, authenticate: () => Promise.reject(new Error('not a share')) };

async function share(id: string, createdBy: string, revoked = false): Promise<ShareRecord & { token: string }> {
  const token = `${SHARE_TOKEN_PREFIX}${id}-token`;
  return { id, token, sessionId: 's1', instanceId: 'i1', tokenSha256: await sha256Hex(token), scope: 'pty:control', label: null, createdBy, createdAt: new Date(NOW).toISOString(), expiresAt: later, revokedAt: revoked ? new Date(NOW).toISOString() : null };
}

function store(records: ShareRecord[]): ShareStore {
  return {
    create: () => Promise.resolve(),
    byTokenHash: (h) => Promise.resolve(records.find((r) => r.tokenSha256 === h)),
    byId: (id) => Promise.resolve(records.find((r) => r.id === id)),
    listActive: () => Promise.resolve([]),
    revoke: () => Promise.resolve(false),
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
