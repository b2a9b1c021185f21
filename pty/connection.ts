// One router connection as the host sees it: framing in, frames out, and whether the peer
// is keeping up.

import type { Duplex } from 'node:stream';
import type { HopTrace } from '../src/ports/hop-trace.ts';
import type { Logger } from '../src/ports/logger.ts';
import { FrameDecoder } from './wire/frame-decoder.ts';
import { RequestSchema, type Request } from './wire/protocol.ts';

export interface ConnectionHandlers {
  onRequest(conn: Connection, req: Request): void;
  /** `true` when the socket's buffer filled up, `false` once it drained. */
  onCongestion(conn: Connection, congested: boolean): void;
  onClose(conn: Connection): void;
}

export class Connection {
  readonly log: Logger;
  readonly #socket: Duplex;
  readonly #handlers: ConnectionHandlers;
  readonly #decoder = new FrameDecoder(RequestSchema);
  #congested = false;

  readonly #trace: HopTrace | undefined;

  /** `trace`: the echo path's hop trace (src/adapter/node/hop-trace.ts), undefined unless it is on. */
  constructor(socket: Duplex, log: Logger, handlers: ConnectionHandlers, trace?: HopTrace) {
    this.#socket = socket;
    this.log = log;
    this.#handlers = handlers;
    this.#trace = trace;
    if (trace) socket.on('data', (chunk: Buffer) => trace('host.in', chunk));
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (err) => this.log.log('info', 'connection error', { err }));
    socket.on('close', () => this.#handlers.onClose(this));
  }

  /** Queues a frame; never throws. A full socket buffer is reported through onCongestion. */
  send(frame: Uint8Array): void {
    if (this.#socket.destroyed || !this.#socket.writable) return;
    this.#trace?.('host.out', frame);
    if (this.#socket.write(frame) || this.#congested) return;
    this.#congested = true;
    this.#handlers.onCongestion(this, true);
    this.#socket.once('drain', () => {
      this.#congested = false;
      this.#handlers.onCongestion(this, false);
    });
  }

  /** Drops the connection; onClose follows. */
  drop(reason: string): void {
    if (this.#socket.destroyed) return;
    this.log.log('warn', 'dropping connection', { reason });
    this.#socket.destroy();
  }

  #receive(chunk: Buffer): void {
    this.#decoder.push(chunk);
    for (;;) {
      let req: Request | undefined;
      try {
        req = this.#decoder.next();
      } catch (err) {
        this.drop(err instanceof Error ? err.message : String(err));
        return;
      }
      if (!req) return;
      try {
        this.#handlers.onRequest(this, req);
      } catch (err) {
        // A host bug on one request must not take the router's whole view of the host with it.
        this.log.log('error', 'request handler failed', { err, t: req.t });
      }
    }
  }
}
