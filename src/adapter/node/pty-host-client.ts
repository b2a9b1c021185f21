// The router's side of the PTY host socket on Node: pty/client.ts over node:net.

import { createConnection, type Socket } from 'node:net';
import { PtyHostConnection, type HostSocket, type PtyHostClientOptions } from '../../../pty/client.ts';
import { PtyHostError } from '../../../pty/protocol.ts';

export { PtyHostError, type PtyHostClientOptions };

/** The portable PTY host connection over a node:net Unix socket. */
export class PtyHostClient extends PtyHostConnection {
  /** Connects and waits for the host's greeting. Rejects with the socket error (ENOENT, ECONNREFUSED, ...). */
  static connect(socketPath: string, options: PtyHostClientOptions = {}): Promise<PtyHostClient> {
    return PtyHostConnection.greet(new PtyHostClient(nodeHostSocket(createConnection(socketPath)), options), socketPath, options.timeoutMs);
  }
}

function nodeHostSocket(socket: Socket): HostSocket {
  return {
    write: (bytes) => void socket.write(bytes),
    end: () => void socket.end(),
    destroy: () => void socket.destroy(),
    get writable() {
      return socket.writable;
    },
    get closed() {
      return socket.closed;
    },
    pause: () => void socket.pause(),
    resume: () => void socket.resume(),
    listen(events) {
      socket.on('data', (chunk: Buffer) => events.data(chunk));
      socket.on('error', (err) => events.error(err));
      socket.on('close', () => events.close());
    },
  };
}
