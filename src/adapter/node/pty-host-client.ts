// The router's side of the PTY host socket on Node: pty/client.ts over node:net.

import { createConnection, type Socket } from 'node:net';
import path from 'node:path';
import { PtyHostConnection, type HostSocket, type PtyHostClientOptions } from '../../../pty/client.ts';
import { PtyHostError } from '../../../pty/protocol.ts';
import { hostSocketProblem } from '../../private-files.ts';
import type { HopTrace } from '../../ports.ts';
import { nodeFileFacts } from './file-facts.ts';
import { hopTraceFromEnv } from './hop-trace.ts';

export { PtyHostError, type PtyHostClientOptions };

/** The portable PTY host connection over a node:net Unix socket. */
export class PtyHostClient extends PtyHostConnection {
  /**
   * Connects and waits for the host's greeting. Rejects with the socket error (ENOENT,
   * ECONNREFUSED, ...), or, before connecting, with an UntrustedHostSocketError when the socket
   * or its directory could belong to another user: whoever listens there receives every keystroke.
   */
  static async connect(socketPath: string, options: PtyHostClientOptions = {}): Promise<PtyHostClient> {
    const problem = hostSocketProblem(path.resolve(socketPath), nodeFileFacts);
    if (problem) throw new UntrustedHostSocketError(problem);
    const socket = nodeHostSocket(createConnection(socketPath), hopTraceFromEnv(process.env, 'router-host'));
    return PtyHostConnection.greet(new PtyHostClient(socket, options), socketPath, options.timeoutMs);
  }
}

/** The socket at the PTY host path may be another user's (see hostSocketProblem). */
export class UntrustedHostSocketError extends Error {
  readonly code = 'UNTRUSTED_SOCKET';
  constructor(message: string) {
    super(message);
    this.name = 'UntrustedHostSocketError';
  }
}

/** `trace` (hop-trace.ts, undefined unless on) marks each frame written to the host and each chunk read from it. */
function nodeHostSocket(socket: Socket, trace?: HopTrace): HostSocket {
  return {
    write: trace
      ? (bytes) => {
          trace('router.to_host', bytes);
          socket.write(bytes);
        }
      : (bytes) => void socket.write(bytes),
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
      if (trace) socket.on('data', (chunk: Buffer) => trace('router.from_host', chunk));
      socket.on('data', (chunk: Buffer) => events.data(chunk));
      socket.on('error', (err) => events.error(err));
      socket.on('close', () => events.close());
    },
  };
}
