// WebSocket keepalive on Deno, the same as on Node (docs/protocol.md §1.5): a Ping every
// PTY_WS_PING_INTERVAL_MS whatever the traffic, and a connection that has sent nothing (no Pong,
// no frame) for PTY_WS_PONG_TIMEOUT_MS closed with 1011 and detached at once.
//
// Deno's server WebSocket has no ping() and reports no Pong. What it has is its idle timer: armed,
// it sends a Ping half an `idleTimeout` later and closes with 1001 another half later, and it is
// re-armed by an internal method the socket calls on every frame it receives, Pongs included. So:
// - that method is replaced on each socket by one that only notes the time (every receipt, so
//   Pongs are seen), and
// - the original is called every ping interval to re-arm the timer, with `idleTimeout` set so that
//   its Ping falls two thirds into the interval and its 1001 would fall a third after the next
//   re-arm, which always comes first (timers fire in the order they are due).
// The method is found by its symbol's description on WebSocket.prototype; a Deno without it gets
// null here and the server keeps Deno's own idle timeout (and logs that it does).
import { CLOSE, reapedReason } from '../../protocol/close-codes.ts';

export interface KeepaliveSettings {
  pingIntervalMs: number;
  pongTimeoutMs: number;
}

export interface DenoKeepalive {
  /** The `idleTimeout` (seconds) to upgrade with. */
  idleTimeoutSeconds: number;
  /** Starts keepalive on an open socket; `onStale` runs when it is reaped. Returns the stop. */
  start(ws: WebSocket, onStale: () => void): () => void;
}

const RECEIPT_HOOK = '[[serverHandleIdleTimeout]]';

export function denoKeepalive(s: KeepaliveSettings, proto: object = WebSocket.prototype): DenoKeepalive | null {
  const hook = Object.getOwnPropertySymbols(proto).find((sym) => sym.description === RECEIPT_HOOK);
  const rearm = hook === undefined ? undefined : (proto as Record<symbol, unknown>)[hook];
  if (hook === undefined || typeof rearm !== 'function') return null;
  return {
    idleTimeoutSeconds: (s.pingIntervalMs * 4) / 3 / 1000,
    start(ws, onStale) {
      let last = Date.now();
      Object.defineProperty(ws, hook, { value: () => void (last = Date.now()), configurable: true });
      const arm = () => (rearm as (this: WebSocket) => void).call(ws);
      arm();
      const timer = setInterval(() => {
        if (ws.readyState !== WebSocket.OPEN) return;
        if (Date.now() - last > s.pongTimeoutMs) {
          clearInterval(timer);
          ws.close(CLOSE.reaped, reapedReason(s.pongTimeoutMs));
          onStale();
          return;
        }
        arm();
      }, s.pingIntervalMs);
      return () => clearInterval(timer);
    },
  };
}
