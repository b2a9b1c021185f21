// The router's side of the PTY host socket on Node: src/host-link/client.ts over node:net.

import { createConnection } from 'node:net';
import path from 'node:path';
import { PtyHostConnection, type HostSocket, type HostSocketEvents, type PtyHostClientOptions } from '../../host-link/client.ts';
import { PtyHostError } from '../../../pty/wire/protocol.ts';
import { hostSocketProblem } from '../../services/private-files.ts';
import { LINK_READ_BYTES } from '../../core/flow-budget.ts';
import type { HopTrace } from '../../ports/hop-trace.ts';
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
    const socket = nodeHostSocket(socketPath, hopTraceFromEnv(process.env, 'router-host'));
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


/**
 * Every read goes into one buffer, reused (`onread`): a new buffer per read was a third of the
 * router's buffer allocations under a flood, and those decide how often V8 collects the whole
 * heap (docs/performance.md "Fewer buffers per output byte"). The client copies what it keeps
 * (HostSocketEvents.data). `trace` (hop-trace.ts, undefined unless on) marks each frame written
 * to the host and each chunk read from it.
 */
function nodeHostSocket(socketPath: string, trace?: HopTrace): HostSocket {
  let events: HostSocketEvents | undefined;
  const socket = createConnection({
    path: socketPath,
    onread: {
      // Sized with the host's largest frame (src/core/flow-budget.ts), so most frames arrive whole.
      buffer: Buffer.allocUnsafe(LINK_READ_BYTES),
      callback: (size, buffer) => {
        const chunk = buffer.subarray(0, size);
        trace?.('router.from_host', chunk);
        events?.data(chunk);
        return true; // pause() and resume() do the pausing (flow control)
      },
    },
  });
  return {
    // Node calls a write's callback once it is handed to the OS, or with an error once the socket is destroyed.
    write: trace
      ? (bytes, written) => {
          trace('router.to_host', bytes);
          socket.write(bytes, written && (() => written()));
        }
      : (bytes, written) => void socket.write(bytes, written && (() => written())),
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
    listen(listener) {
      events = listener;
      socket.on('error', (err) => listener.error(err));
      socket.on('close', () => listener.close());
    },
  };
}
