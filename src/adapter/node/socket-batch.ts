// A flush's sends written out together (ClientConnection.batch; docs/performance.md, replay). `ws`
// writes every message to its TCP socket at once, one writev per frame: a replay of 1000 frames
// would be 1000 system calls, about half of its time. Corking the socket for the batch makes them a few
// large writes; `ws` corks around each frame itself, and Node's cork nests.
import type { Socket } from 'node:net';
import type WebSocket from 'ws';

/**
 * A batch writes out what it has gathered every this many bytes, so a long replay reaches the
 * client while it is still being written and the socket's queue (what lag detection reads,
 * src/hub/member.ts) holds at most this much more than it would unbatched.
 */
export const BATCH_FLUSH_BYTES = 256 * 1024;

export interface SocketBatch {
  /** Runs `write` with the socket corked. */
  batch(write: () => void): void;
  /** A send of `bytes` was made (a text's length serves: its UTF-8 is at least that): inside a batch, flushes once enough has gathered. */
  sent(bytes: number): void;
}

export function socketBatch(ws: WebSocket): SocketBatch {
  // `ws` keeps its TCP (or TLS) socket here, set once open; it has no public accessor for it.
  const raw = ws as unknown as { _socket?: Socket | null };
  /** The socket corked by the batch under way, and the bytes sent into it since its last flush. */
  let open: { socket: Socket; gathered: number } | null = null;
  return {
    batch(write) {
      const socket = raw._socket;
      // Nested, or no socket to cork: the sends simply go as they are made.
      if (open || !socket) return write();
      open = { socket, gathered: 0 };
      socket.cork();
      try {
        write();
      } finally {
        open = null;
        socket.uncork();
      }
    },
    sent(bytes) {
      if (!open) return;
      open.gathered += bytes;
      if (open.gathered < BATCH_FLUSH_BYTES) return;
      open.gathered = 0;
      open.socket.uncork();
      open.socket.cork();
    },
  };
}
