// The WebhookTransport port on Deno: names resolved with Deno.resolveDns, one HTTP/1.1 POST per
// connection. The TCP connection goes to the address the caller checked, never to a fresh lookup
// of the name (docs/security.md, "Push notifications"); TLS is started on it for the URL's host,
// which is what the certificate is verified against and what SNI and Host name.
import type { WebhookTransport } from '../../ports/webhook-transport.ts';

/** Longest status line and headers read: only the status matters. */
const MAX_HEAD = 16 * 1024;

export function denoWebhookTransport(): WebhookTransport {
  return {
    async resolve(hostname) {
      if (/^[\d.]+$/.test(hostname) || hostname.includes(':')) return [hostname];
      // Deno.resolveDns asks DNS servers only: the hosts file's one name every machine has is answered here.
      if (hostname === 'localhost') return ['127.0.0.1', '::1'];
      const [v4, v6] = await Promise.allSettled([Deno.resolveDns(hostname, 'A'), Deno.resolveDns(hostname, 'AAAA')]);
      const found = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
      if (found.length === 0) throw v4.status === 'rejected' ? v4.reason : new Error(`${hostname} has no address`);
      return found;
    },

    async post({ url, address, headers, body, timeoutMs, signal }) {
      const tls = url.protocol === 'https:';
      const deadline = AbortSignal.timeout(timeoutMs);
      const abort = signal ? AbortSignal.any([signal, deadline]) : deadline;
      let conn: Deno.Conn = await Deno.connect({ hostname: address, port: url.port === '' ? (tls ? 443 : 80) : Number(url.port) });
      const close = () => {
        try {
          conn.close();
        } catch {
          // already closed
        }
      };
      abort.addEventListener('abort', close, { once: true });
      try {
        if (tls) conn = await Deno.startTls(conn as Deno.TcpConn, { hostname: url.hostname.replace(/^\[(.*)\]$/, '$1') });
        const payload = new TextEncoder().encode(body);
        const lines = [`POST ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `content-length: ${payload.length}`, 'connection: close'];
        const head = new TextEncoder().encode(`${lines.join('\r\n')}\r\n\r\n`);
        await writeAll(conn, head);
        await writeAll(conn, payload);
        return await readStatus(conn);
      } catch (e) {
        throw abort.aborted ? new Error(deadline.aborted ? `no answer within ${timeoutMs} ms` : 'called off') : e;
      } finally {
        abort.removeEventListener('abort', close);
        close();
      }
    },
  };
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length; ) off += await conn.write(bytes.subarray(off));
}

/** The status code of the answer's status line. */
async function readStatus(conn: Deno.Conn): Promise<number> {
  const buf = new Uint8Array(MAX_HEAD);
  let got = 0;
  for (;;) {
    const n = await conn.read(buf.subarray(got));
    if (n === null) break;
    got += n;
    const text = new TextDecoder().decode(buf.subarray(0, got));
    const end = text.indexOf('\r\n');
    if (end >= 0) {
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text.slice(0, end));
      if (!m) throw new Error(`the webhook answered something that is not HTTP/1.1: ${JSON.stringify(text.slice(0, 64))}`);
      return Number(m[1]);
    }
    if (got === buf.length) break;
  }
  throw new Error('the webhook closed the connection without an answer');
}
