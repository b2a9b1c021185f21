// The WebSocket close codes the server sends besides a fatal error's own (ERROR_TABLE's `close` in
// src/protocol/errors.ts). With that table, this is the one source of docs/protocol.md §7.2's close-code
// table (test/docs/doc-tables.test.ts compares them).
export const CLOSE = {
  /** After `binding_goodbye`: leave_session, session_closed, server_shutdown (binding §5.4). */
  goodbye: 1000,
  /** Deno only: a socket still open when the server stops (Deno cannot drop one without a close frame). */
  goingAway: 1001,
  /** A WebSocket message over the frame limit (1 MiB). */
  tooBig: 1009,
  /** A connection that answered no Ping within PTY_WS_PONG_TIMEOUT_MS (binding §2.4), on every runtime. */
  reaped: 1011,
  /** The session vanished between the upgrade and the hello. */
  sessionGone: 4404,
} as const;

/** The reason a reaped connection's close frame carries, on every runtime. */
export const reapedReason = (pongTimeoutMs: number): string => `no Pong within ${pongTimeoutMs} ms`;
