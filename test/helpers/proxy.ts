// A TCP proxy in front of the server, so a test can cut the network under a client (both sides see
// the connection drop, as with a real outage) without touching the server.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CuttableProxy {
  /** http://127.0.0.1:<port> */
  origin: string;
  port: number;
  /** Destroys every open connection; while `refuse` is true new ones are destroyed on arrival too. */
  cut(opts?: { refuse?: boolean }): void;
  /** Accepts connections again after `cut({ refuse: true })`. */
  restore(): void;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<CuttableProxy> {
  const open = new Set<Socket>();
  let refusing = false;
  let accepted = 0;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    accepted++;
    const upstream = connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    cut(opts = {}) {
      refusing = opts.refuse ?? false;
      for (const s of open) s.destroy();
    },
    restore() {
      refusing = false;
    },
    accepted: () => accepted,
    close() {
      for (const s of open) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
