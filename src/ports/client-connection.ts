// One client’s WebSocket, as the session core sees it.
/** One accepted WebSocket, as the session core sees it. Sends are best-effort and never throw. */
export interface ClientConnection {
  /** True when the connection negotiated `pty-ws.v1.binary`. */
  readonly binary: boolean;
  sendText(text: string): void;
  sendBinary(bytes: Uint8Array): void;
  /** Bytes queued in the transport and not yet sent (0 where the runtime cannot tell). */
  bufferedAmount(): number;
  close(code: number, reason: string): void;
  /**
   * Runs `write`, whose sends reach the network together: a few large writes rather than one
   * system call per frame (a flush's replay, docs/performance.md). Order is kept. Absent where the
   * runtime offers no way to do it: the sends then go one by one.
   */
  batch?(write: () => void): void;
}
