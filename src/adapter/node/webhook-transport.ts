// The WebhookTransport port on node:dns and node:http(s). The connection goes to the address the
// caller checked, never to a fresh lookup of the name (docs/security.md, "Push notifications"); the
// name still travels in Host and in TLS, where the certificate is verified against it.
import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { WebhookTransport } from '../../ports/webhook-transport.ts';

export interface WebhookTransportOptions {
  /** CA certificates (PEM) trusted instead of the system's: a test's own. */
  ca?: string;
}

export function nodeWebhookTransport(opts: WebhookTransportOptions = {}): WebhookTransport {
  return {
    async resolve(hostname) {
      if (isIP(hostname) !== 0) return [hostname];
      return (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
    },

    post({ url, address, headers, body, timeoutMs, signal }) {
      return new Promise<number>((resolve, reject) => {
        const tls = url.protocol === 'https:';
        const name = url.hostname.replace(/^\[(.*)\]$/, '$1');
        const payload = Buffer.from(body);
        const options = {
          host: address,
          port: url.port === '' ? (tls ? 443 : 80) : Number(url.port),
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: { ...headers, host: url.host, 'content-length': String(payload.length) },
          // A connection of its own: never one pooled for another name on the same address.
          agent: false,
          signal,
          ...(tls ? { servername: isIP(name) === 0 ? name : undefined, ...(opts.ca === undefined ? {} : { ca: opts.ca }) } : {}),
        };
        const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        const answered = (res: IncomingMessage) => {
          clearTimeout(deadline);
          // Only the status matters: the body is not read, and the connection is not kept.
          res.on('error', () => undefined);
          res.destroy();
          resolve(res.statusCode ?? 0);
        };
        const req = (tls ? httpsRequest : httpRequest)(options, answered);
        req.on('error', (e) => {
          clearTimeout(deadline);
          reject(e);
        });
        req.end(payload);
      });
    },
  };
}
