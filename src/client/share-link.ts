// What a client says about its share link (docs/sharing.md): whether its bearer is one, and why
// the server stopped taking it, in the words of someone who was handed a link, not a token.
import { SHARE_EXPIRED, SHARE_REVOKED, SHARE_TOKEN_PREFIX } from '../protocol/share-info.ts';

export function isShareToken(token: string | null | undefined): boolean {
  return token?.startsWith(SHARE_TOKEN_PREFIX) ?? false;
}

/** "this link was revoked" for a refusal's `reason` (Error frame) or `code` (401 body); undefined for any other. */
export function shareLinkEnded(reason: string | undefined): string | undefined {
  if (reason === SHARE_REVOKED) return 'this link was revoked: ask whoever shared it for a new one';
  if (reason === SHARE_EXPIRED) return 'this link has expired: ask whoever shared it for a new one';
  return undefined;
}
