// The pty-ws client library: runtime-portable (browser, Deno, Node with a `ws` factory).
export { PtyClient } from './pty-client.ts';
export { ReplayCursor } from './replay-cursor.ts';
export { attachProtocols } from './frames.ts';
export { SessionsApi, RestError, type CreateSessionBody, type SessionInfo } from './sessions-api.ts';
export { globalWebSocket, type WebSocketFactory, type WebSocketLike } from './websocket.ts';
export type * from './types.ts';
