// A `ws` socket as a ClientConnection, with WebSocket Ping/Pong keepalive (pty-ws-v1 §2.4).
import type { WSContext } from 'hono/ws';
import WebSocket from 'ws';
import type { ClientConnection } from '../../ports.ts';

export interface Keepalive {
  pingIntervalMs: number;
  pongTimeoutMs: number;
}

export function wrapNodeSocket(ctx: WSContext, binary: boolean, keepalive: Keepalive, onStale: () => void): ClientConnection & { dispose(): void } {
  const ws = ctx.raw as WebSocket;
  let lastPong = Date.now();
  const onPong = () => {
    lastPong = Date.now();
  };
  ws.on('pong', onPong);
  const timer = setInterval(() => {
    if (Date.now() - lastPong > keepalive.pongTimeoutMs) {
      dispose();
      ws.terminate();
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
  return {
    binary,
    sendText(text) {
      if (ws.readyState === WebSocket.OPEN) ws.send(text, ignore);
    },
    sendBinary(bytes) {
      if (ws.readyState === WebSocket.OPEN) ws.send(bytes, { binary: true }, ignore);
    },
    bufferedAmount: () => ws.bufferedAmount,
    close(code, reason) {
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(code, reason.slice(0, 120));
    },
    dispose,
  };
}
