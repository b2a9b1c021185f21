// Sockets that connected but have not sent a request yet (docs/security.md, attack 8): node:http's
// own timeouts drop them within seconds, and at most `max` may wait at once; more are dropped on
// arrival, so a flood of silent connections cannot use up the process's file descriptors.
import type { Server } from 'node:net';

/** What the router's fetch calls for every request it receives (plain or TLS socket, upgrade or not). */
export type RequestSeen = (socket: object) => void;

/** Counts connections and those that have sent a request; the difference is what is still pending. */
export function guardPendingConnections(server: Server, max: number): RequestSeen {
  const connected = new Set<object>();
  const requested = new Set<object>();
  server.on('connection', (socket) => {
    if (connected.size - requested.size >= max) {
      socket.destroy();
      return;
    }
    connected.add(socket);
    socket.once('close', () => connected.delete(socket));
  });
  return (socket) => {
    if (requested.has(socket) || !('once' in socket)) return;
    requested.add(socket);
    (socket as { once(e: 'close', f: () => void): void }).once('close', () => requested.delete(socket));
  };
}
