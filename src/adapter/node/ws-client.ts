// The client library's WebSocket on Node: the `ws` package (Node 20 has no global WebSocket).
import WebSocket, { type ClientOptions } from 'ws';
import type { WebSocketFactory, WebSocketLike } from '../../client/websocket.ts';

/** A factory for PtyClient; `options` reach `ws` (e.g. `ca` for a self-signed wss:// server). */
export function nodeWebSocket(options: ClientOptions = {}): WebSocketFactory {
  return (url, protocols) => new WebSocket(url, protocols, options) as unknown as WebSocketLike;
}
