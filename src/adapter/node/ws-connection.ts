// A `ws` socket as a ClientConnection, with WebSocket Ping/Pong keepalive (docs/protocol.md §1.5).
import type { WSContext } from 'hono/ws';
import WebSocket from 'ws';
import type { Metrics } from '../../core/metrics.ts';
import type { ClientConnection } from '../../ports/client-connection.ts';
import type { HopTrace } from '../../ports/hop-trace.ts';
import { socketBatch } from './socket-batch.ts';
import { CLOSE, reapedReason } from '../../protocol/close-codes.ts';

const TEXT = { kind: 'text' };
const BINARY = { kind: 'binary' };

/** How long a reaped peer has to answer the close frame before the socket is dropped. */
const STALE_CLOSE_GRACE_MS = 1000;

export interface Keepalive {
  pingIntervalMs: number;
  pongTimeoutMs: number;
}

/** `trace`: the echo path's hop trace (hop-trace.ts), undefined unless it is on. */
export function wrapNodeSocket(ctx: WSContext, binary: boolean, keepalive: Keepalive, onStale: () => void, metrics: Metrics, trace?: HopTrace): ClientConnection & { dispose(): void } {
  const ws = ctx.raw as WebSocket;
  // First among the socket's listeners: the time a client's frame arrived, before it is handled.
  if (trace) ws.prependListener('message', () => trace('router.ws_in'));
  let lastPong = Date.now();
  const onPong = () => {
    lastPong = Date.now();
  };
  ws.on('pong', onPong);
  const timer = setInterval(() => {
    if (Date.now() - lastPong > keepalive.pongTimeoutMs) {
      dispose();
      // A close frame says why (a peer that is only slow, or a proxy, sees CLOSE.reaped and not a bare
      // drop); a peer that answers nothing cannot hold the socket past the grace.
      ws.close(CLOSE.reaped, reapedReason(keepalive.pongTimeoutMs));
      setTimeout(() => ws.terminate(), STALE_CLOSE_GRACE_MS).unref();
      onStale();
      return;
    }
    if (ws.readyState === WebSocket.OPEN) ws.ping();
  }, keepalive.pingIntervalMs);
  timer.unref();

  function dispose(): void {
    clearInterval(timer);
    ws.off('pong', onPong);
  }

  const ignore = () => undefined;
  const batching = socketBatch(ws);
  return {
    binary,
    sendText(text) {
      if (ws.readyState !== WebSocket.OPEN) return;
      trace?.('router.ws_out');
      ws.send(text, ignore);
      batching.sent(text.length);
      metrics.inc('frames_out_total', TEXT);
      metrics.inc('bytes_out_total', TEXT, text.length);
    },
    sendBinary(bytes) {
      if (ws.readyState !== WebSocket.OPEN) return;
      trace?.('router.ws_out');
      ws.send(bytes, { binary: true }, ignore);
      batching.sent(bytes.byteLength);
      metrics.inc('frames_out_total', BINARY);
      metrics.inc('bytes_out_total', BINARY, bytes.byteLength);
    },
    bufferedAmount: () => ws.bufferedAmount,
    batch: batching.batch,
    close(code, reason) {
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(code, reason.slice(0, 120));
    },
    dispose,
  };
}
