// Remote PTY hosts as the REST routes describe them (docs/remote-hosts.md): the server's responses
// are typed from these schemas and the client parses them with the same ones.
import * as v from 'valibot';

/** The WebSocket subprotocol of a host link: the PTY host protocol's frames as binary messages. */
export const HOST_SUBPROTOCOL = 'pty-ws.host.v1';

/** Every host credential starts with this: user routes refuse it by its shape, the link route looks it up. */
export const HOST_TOKEN_PREFIX = 'pwhost_';

/** The scope a host credential stands for: it registers its one host, and nothing else. */
export const HOST_SCOPE = 'pty:host';

/** A host's name: what sessions are placed by (`host` in session creation) and what its credential is bound to. */
export const HostName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9._-]{1,64}$/, 'a host name is 1 to 64 letters, digits, . _ -'));

export const HostInfo = v.object({
  name: v.string(),
  /** Whether its link is up now. */
  connected: v.boolean(),
  /** Since when it is linked (ISO-8601 UTC); null while it is not. */
  since: v.nullable(v.string()),
  /** The backends the linked host offers (empty while it is not linked). */
  backends: v.array(v.string()),
  /** Sessions of this router placed on it that have not ended. */
  sessions: v.number(),
});
export type HostInfo = v.InferOutput<typeof HostInfo>;

export const HostList = v.object({ hosts: v.array(HostInfo) });

/** The answer to minting a host credential: the only place the token is ever shown. */
export const MintedHostToken = v.object({ name: v.string(), scope: v.literal(HOST_SCOPE), token: v.string() });
export type MintedHostToken = v.InferOutput<typeof MintedHostToken>;
