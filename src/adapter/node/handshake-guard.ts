// Sockets that connected but have not sent a request yet (docs/security.md, attack 8): node:http's
// own timeouts drop them within seconds, and only so many may wait at once, per remote address and
// in all. Past either limit the socket that has waited longest goes (of the newcomer's own address,
// or of the address with the most waiting), never the newcomer: a flood of silent connections from
// a few addresses then cannot keep anyone else out, nor use up the process's file descriptors.
import type { Server, Socket } from 'node:net';
import { addressGroup } from '../../core/address-group.ts';

/** What the router's fetch calls for every request it receives (plain or TLS socket, upgrade or not). */
export type RequestSeen = (socket: object) => void;

export interface PendingLimits {
  total: number;
  perAddress: number;
}

interface Waiting {
  socket: Socket;
  peer: string;
  group: string;
  arrival: number;
}

export function guardPendingConnections(server: Server, limits: PendingLimits): RequestSeen {
  const pending = new PendingSockets(limits);
  server.on('connection', (socket: Socket) => pending.arrived(socket));
  return (socket) => pending.requested(socket as Partial<Socket>);
}

class PendingSockets {
  /** By peer: a TLS request's socket is not the TCP socket that arrived, but has its addresses. */
  private readonly byPeer = new Map<string, Waiting>();
  /** By address group, each in arrival order (a Set keeps insertion order). */
  private readonly byGroup = new Map<string, Set<Waiting>>();
  private arrivals = 0;

  constructor(private readonly limits: PendingLimits) {}

  arrived(socket: Socket): void {
    const peer = peerOf(socket);
    if (peer === undefined) return; // already gone
    const group = addressGroup(socket.remoteAddress!);
    const same = this.byGroup.get(group);
    if (same && same.size >= this.limits.perAddress) this.evict(first(same));
    else if (this.byPeer.size >= this.limits.total) this.evict(this.oldestOfBusiest());
    const waiting: Waiting = { socket, peer, group, arrival: this.arrivals++ };
    this.byPeer.set(peer, waiting);
    this.byGroup.set(group, (same ?? new Set()).add(waiting));
    socket.once('close', () => this.forget(waiting));
  }

  requested(socket: Partial<Socket>): void {
    const peer = peerOf(socket);
    const waiting = peer === undefined ? undefined : this.byPeer.get(peer);
    if (waiting) this.forget(waiting);
  }

  private evict(waiting: Waiting): void {
    this.forget(waiting);
    waiting.socket.destroy();
  }

  private forget(waiting: Waiting): void {
    if (this.byPeer.get(waiting.peer) !== waiting) return;
    this.byPeer.delete(waiting.peer);
    const group = this.byGroup.get(waiting.group)!;
    group.delete(waiting);
    if (group.size === 0) this.byGroup.delete(waiting.group);
  }

  /** The longest-waiting socket of the address with the most waiting; ties go to the earlier arrival. */
  private oldestOfBusiest(): Waiting {
    let pick: Waiting | undefined;
    let most = 0;
    for (const group of this.byGroup.values()) {
      const oldest = first(group);
      if (group.size > most || (group.size === most && oldest.arrival < pick!.arrival)) {
        pick = oldest;
        most = group.size;
      }
    }
    return pick!;
  }
}

const first = (set: Set<Waiting>): Waiting => set.values().next().value!;

/** One TCP connection's addresses, the same on a TLS socket as on the TCP socket under it. */
function peerOf(socket: Partial<Socket>): string | undefined {
  const { remoteAddress, remotePort, localAddress, localPort } = socket;
  return remoteAddress === undefined || remotePort === undefined ? undefined : `${remoteAddress} ${remotePort} ${localAddress} ${localPort}`;
}
