// Small helpers shared by the routes: public URLs, bearer extraction, tokens where they must not be.
import type { Context } from 'hono';
import { isJwtShaped } from '../src/auth/authenticator.ts';
import { BindingError } from '../src/protocol/errors.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../src/protocol/json-depth.ts';
import type { Config } from '../src/core/config.ts';
import { plaintextRefused } from '../src/auth/startup-policy.ts';
import { hostNamesThisServer } from './guards.ts';

/**
 * The origin clients are told to use (attach_url, the AgentCard), as http(s) and ws(s): the
 * configured public URL; else the request's Host when it names this server (loopback or the bound
 * address, at our port); else the bound address. Never an arbitrary Host a client sent
 * (docs/security.md, attack 6). `secure` when a trusted TLS proxy is in front. Where this server
 * refuses plaintext (production, a public address) it names https:// and wss:// only, whatever
 * the request came in on: a plain URL would only be refused (403).
 */
export function publicOrigins(c: Context, config: Config, localPort: number | undefined, secure = false): { http: string; ws: string } {
  const tlsOnly = plaintextRefused(config);
  const scheme = secure || tlsOnly ? 'https:' : new URL(c.req.url).protocol;
  let http = config.publicUrl;
  if (http === undefined) {
    const host = c.req.header('host');
    if (host !== undefined && hostNamesThisServer(host, config, localPort, scheme)) http = `${scheme}//${host}`;
    else http = `${scheme}//${config.host.includes(':') ? `[${config.host}]` : config.host}${localPort === undefined ? '' : `:${localPort}`}`;
  } else if (tlsOnly) {
    http = http.replace(/^http:/, 'https:');
  }
  return { http, ws: http.replace(/^http/, 'ws') };
}

export function attachUrl(wsOrigin: string, instanceId: string, sessionId: string): string {
  return `${wsOrigin}/agents/${encodeURIComponent(instanceId)}/sessions/${sessionId}/attach`;
}

export function bearerFromHeader(c: Context): string | null {
  const h = c.req.header('authorization');
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : '';
}

/** Query parameter names that only ever carry credentials, compared in lower case. */
const TOKEN_QUERY_NAMES = new Set(['token', 'access_token', 'id_token', 'bearer', 'auth', 'authorization', 'jwt', 'api_key', 'apikey']);

/**
 * Tokens never travel in the URL (docs/protocol.md §1.3, docs/security.md attack 7): describes the first
 * query parameter that carries one — a credential name in any case, or a name or value that is a
 * JWT or a token this server knows — or null. The description never contains the token itself.
 */
export async function tokenInQuery(c: Context, knows: ((token: string) => Promise<boolean>) | undefined): Promise<string | null> {
  const url = c.req.url;
  if (!url.includes('?')) return null;
  const isToken = async (s: string) => {
    const t = s.replace(/^bearer\s+/i, '').trim();
    return t !== '' && (isJwtShaped(t) || (await knows?.(t)) === true);
  };
  for (const [name, value] of new URL(url).searchParams) {
    // A name that is itself a token is not repeated; any other name may be.
    if (await isToken(name)) return 'a parameter name';
    if (TOKEN_QUERY_NAMES.has(name.toLowerCase()) || (await isToken(value))) return `parameter ${JSON.stringify(name.slice(0, 64))}`;
  }
  return null;
}

/**
 * A request body larger than this is refused before it is parsed: REST and the A2A bindings alike
 * (docs/a2a.md, docs/security.md). A record made from a body is stored and read back by every list.
 */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The body as text, or null as soon as it grows past `max` bytes (a missing Content-Length does
 * not get around it). The rest is not read: the answer says `Connection: close`, so a client that
 * keeps connections does not send its next request on one the server is closing.
 */
export async function readTextWithin(c: Context, max: number): Promise<string | null> {
  const req = c.req.raw;
  if (!req.body) return '';
  const reader = req.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.length;
    if (size > max) {
      c.header('connection', 'close');
      await reader.cancel().catch(() => undefined);
      return null;
    }
    text += decoder.decode(value, { stream: true });
  }
}

/** The body as text; INVALID_REQUEST once it passes `max` bytes (readTextWithin). */
export async function readText(c: Context, max: number): Promise<string> {
  const text = await readTextWithin(c, max);
  if (text === null) throw new BindingError('INVALID_REQUEST', `the body is larger than ${max} bytes`);
  return text;
}

/**
 * Refuses a body that nests deeper than a WebSocket frame may (docs/protocol.md §1.6), on the
 * text before JSON.parse: nothing we take nests that deep, and a deeply nested value passed on
 * (stored, logged, compared) would exhaust the stack of whoever walks it.
 */
export function checkJsonDepth(text: string): void {
  if (nestsDeeperThan(text)) throw new BindingError('INVALID_REQUEST', `the body nests deeper than ${MAX_JSON_DEPTH} levels`);
}

/** A REST POST's JSON body, read within MAX_BODY_BYTES. */
export async function restJsonBody(c: Context): Promise<unknown> {
  const text = await readText(c, MAX_BODY_BYTES);
  checkJsonDepth(text);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BindingError('INVALID_REQUEST', 'the body must be a JSON object');
  }
}
