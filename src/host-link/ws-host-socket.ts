// A host link's WebSocket as the byte stream src/host-link/client.ts speaks the host protocol over
// (docs/remote-hosts.md): each binary message is a run of the protocol's bytes, in order, exactly
// as on the local socket. Portable: the route feeds it what the runtime's upgrade delivers.
import type { WSContext } from 'hono/ws';
import type { HostSocket, HostSocketEvents } from './client.ts';

/** What a runtime's socket may offer beyond WSContext: `ws` on Node stops reading with pause(). */
interface Pausable {
  pause?: () => void;
  resume?: () => void;
}

export class WsHostSocket implements HostSocket {
  #events: HostSocketEvents | undefined;
  #ending = false;
  #closed = false;

  constructor(private readonly ws: WSContext) {}

  /** A message from the host. */
  received(bytes: Uint8Array): void {
    this.#events?.data(bytes);
  }

  /** The WebSocket closed (either side). */
  ended(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    if (error) this.#events?.error(error);
    this.#events?.close();
  }

  write(bytes: Uint8Array, written?: () => void): void {
    if (this.writable) this.ws.send(bytes as Uint8Array<ArrayBuffer>);
    // The runtime queues it now: as far as this side can tell, it is handed over (or dropped, once closed).
    written?.();
  }

  end(): void {
    this.#ending = true;
    this.ws.close(1000, 'router closing the link');
  }

  destroy(): void {
    this.#ending = true;
    this.ws.close(1011, 'router dropping the link');
  }

  get writable(): boolean {
    return !this.#ending && !this.#closed && this.ws.readyState === 1;
  }

  get closed(): boolean {
    return this.#closed;
  }

  pause(): void {
    (this.ws.raw as Pausable | undefined)?.pause?.();
  }

  resume(): void {
    (this.ws.raw as Pausable | undefined)?.resume?.();
  }

  listen(events: HostSocketEvents): void {
    this.#events = events;
  }
}
