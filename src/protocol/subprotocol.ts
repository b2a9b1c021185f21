// Sec-WebSocket-Protocol negotiation (docs/protocol.md §1.2, §1.3).
import { BindingError } from './errors.ts';
import { base64urlToText } from '../core/ids.ts';
import { BINARY_SUBPROTOCOL, JSON_SUBPROTOCOL } from './uris.ts';

export interface Negotiated {
  /** The token to echo, or null when the client offered no header (auth off only). */
  selected: typeof JSON_SUBPROTOCOL | typeof BINARY_SUBPROTOCOL | null;
  binary: boolean;
  /** A `bearer.<base64url>` entry, decoded; never echoed. */
  bearer: string | null;
}

export function offeredProtocols(header: string | null | undefined): string[] | null {
  if (header === null || header === undefined) return null;
  return header.split(',').map((s) => s.trim()).filter(Boolean);
}

/** Binary wins when both are offered; a header without a PTY token is refused. */
export function negotiate(header: string | null | undefined, headerRequired: boolean): Negotiated {
  const offered = offeredProtocols(header);
  const bearer = bearerFromProtocols(offered ?? []);
  if (offered === null) {
    if (headerRequired) throw new BindingError('INVALID_REQUEST', `Sec-WebSocket-Protocol must offer ${JSON_SUBPROTOCOL} or ${BINARY_SUBPROTOCOL}`);
    return { selected: null, binary: false, bearer };
  }
  if (offered.includes(BINARY_SUBPROTOCOL)) return { selected: BINARY_SUBPROTOCOL, binary: true, bearer };
  if (offered.includes(JSON_SUBPROTOCOL)) return { selected: JSON_SUBPROTOCOL, binary: false, bearer };
  throw new BindingError('INVALID_REQUEST', `Sec-WebSocket-Protocol offers no supported token (${JSON_SUBPROTOCOL}, ${BINARY_SUBPROTOCOL})`);
}

export function bearerFromProtocols(offered: string[]): string | null {
  const entry = offered.find((p) => p.startsWith('bearer.'));
  if (!entry) return null;
  return base64urlToText(entry.slice('bearer.'.length));
}
