// The client certificate of a request's TLS socket (mTLS, docs/security.md item 9), as Node's
// TLS layer verified it against PTY_WS_TLS_CLIENT_CA during the handshake.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Context } from 'hono';
import type { ClientCertificate } from '../../auth/certificate.ts';

export function clientCertificateOf(c: Context): ClientCertificate | undefined {
  const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket as TLSSocket | undefined;
  if (!socket?.encrypted) return undefined;
  const cert = socket.getPeerCertificate();
  // An empty object: the client sent no certificate.
  if (!cert || Object.keys(cert).length === 0) return undefined;
  if (!socket.authorized) return { verified: false, reason: String(socket.authorizationError ?? 'not signed by the configured CA') };
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const cn = list(cert.subject?.CN);
  return { verified: true, subjectCN: cn[0] ?? '', organizationalUnits: list(cert.subject?.OU), validTo: Date.parse(cert.valid_to) };
}
