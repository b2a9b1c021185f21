// Refusals before the upgrade with their JSON body on Node. @hono/node-server answers a refused
// upgrade itself from the route's status and headers only ("Content-Length: 0"): the body with the
// error code and message that REST routes and the Deno router send would be lost. So the refusal
// is written to the raw socket here, whole, and the socket is closed before the app's answer goes
// back to node-server, which then leaves it alone (it checks `socket.destroyed` first).
import { STATUS_CODES, type IncomingMessage } from 'node:http';

/** How long a refused client may take to close after the answer. */
const CLIENT_CLOSE_MS = 2000;

type Fetch = (req: Request, env: unknown) => Response | Promise<Response>;

/** Headers that belong to the connection, not to the refusal (the set node-server skips too). */
const HOP_BY_HOP = new Set(['connection', 'content-length', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authenticate', 'proxy-authorization']);

export function withUpgradeRefusalBodies(fetch: Fetch): Fetch {
  return async (req, env) => {
    const res = await fetch(req, env);
    // node-server's upgrade path passes `wss` in env; an accepted upgrade answers 200 (a 101 follows).
    const e = env as { wss?: unknown; incoming?: IncomingMessage } | undefined;
    const socket = e?.wss ? e.incoming?.socket : undefined;
    if (!socket || res.status < 300 || socket.destroyed) return res;
    const body = Buffer.from(await res.arrayBuffer());
    const lines = [`HTTP/1.1 ${res.status} ${STATUS_CODES[res.status] ?? ''}`, 'Connection: close', `Content-Length: ${body.length}`];
    res.headers.forEach((value, key) => {
      if (!HOP_BY_HOP.has(key)) lines.push(`${key}: ${value}`);
    });
    // Half-closed, then closed by the client once it read the answer: destroying it at once
    // could reset the connection before the client read it.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLIENT_CLOSE_MS);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]));
    });
    socket.destroy();
    return res;
  };
}
