// Share links as the REST routes describe them (docs/sharing.md): the server's responses are typed
// from these schemas and the client parses them with the same ones.
import * as v from 'valibot';

/** Every share token starts with this: servers skip the share lookup for other bearers, pages know a share link. */
export const SHARE_TOKEN_PREFIX = 'pwshare_';

/**
 * Why a share link is refused, as the Error frame's `reason` and the 401 body's `code`, so clients
 * can tell their users the link was revoked or has expired rather than that a token failed.
 */
export const SHARE_REVOKED = 'share.revoked';
export const SHARE_EXPIRED = 'share.expired';

export const ShareScope = v.picklist(['pty:observe', 'pty:control']);

export const ShareInfo = v.object({
  share_id: v.string(),
  scope: ShareScope,
  label: v.nullable(v.string()),
  created_by: v.string(),
  created_at: v.string(),
  expires_at: v.string(),
});
export type ShareInfo = v.InferOutput<typeof ShareInfo>;

/** The answer to minting: the only place the token is ever shown. */
export const MintedShare = v.object({ ...ShareInfo.entries, token: v.string(), url: v.string(), session_id: v.string() });
export type MintedShare = v.InferOutput<typeof MintedShare>;

export const ShareList = v.object({ shares: v.array(ShareInfo) });

/** The answer to revoking every share of a principal: how many it had minted (those minted with them went too). */
export const SharesRevoked = v.object({ revoked: v.number() });
export type SharesRevoked = v.InferOutput<typeof SharesRevoked>;
