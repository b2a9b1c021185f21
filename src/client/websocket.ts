// The slice of the WHATWG WebSocket the client uses: browsers, Deno and Node's `ws` all provide it,
// so the client takes a factory and never imports a WebSocket itself.

export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  /** The subprotocol the server selected. */
  readonly protocol: string;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string; wasClean?: boolean }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** Opens a socket offering `protocols` (the PTY subprotocol, and the `bearer.` entry when there is a token). */
export type WebSocketFactory = (url: string, protocols: string[]) => WebSocketLike;

export const OPEN = 1;

/** The runtime's own WebSocket (browsers, Deno, Node ≥ 22). */
export const globalWebSocket: WebSocketFactory = (url, protocols) => {
  const Ctor = (globalThis as { WebSocket?: new (url: string, protocols: string[]) => WebSocketLike }).WebSocket;
  if (!Ctor) throw new Error('this runtime has no global WebSocket: pass a factory (e.g. one built on the ws package)');
  return new Ctor(url, protocols);
};
