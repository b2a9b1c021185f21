// Small helpers shared by the routes: public URLs and bearer extraction.
import type { Context } from 'hono';

/** The origin clients used to reach us, as http(s) and ws(s); `secure` when a trusted TLS proxy is in front. */
export function publicOrigins(c: Context, secure = false): { http: string; ws: string } {
  const u = new URL(c.req.url);
  const http = `${secure ? 'https:' : u.protocol}//${u.host}`;
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

const TOKEN_QUERY_NAMES = ['token', 'access_token', 'bearer', 'auth', 'authorization', 'jwt'];

/** Tokens never travel in the URL (docs/protocol.md §1.3): such a request is refused before anything else. */
export function hasTokenInQuery(c: Context): boolean {
  const params = new URL(c.req.url).searchParams;
  return TOKEN_QUERY_NAMES.some((n) => params.has(n));
}
