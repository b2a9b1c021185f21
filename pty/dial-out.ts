// A remote PTY host's link to its router (docs/remote-hosts.md): it dials out over WebSocket
// (subprotocol pty-ws.host.v1, its host credential as the bearer) and serves the host protocol on
// the link exactly as on the local socket, each write one binary message. Lost or refused, it dials
// again after an exponential backoff with jitter, forever, and says so in its log.
import type { Duplex } from 'node:stream';
import WebSocket, { createWebSocketStream } from 'ws';
import type { Logger } from '../src/ports/logger.ts';
import { HOST_SUBPROTOCOL } from '../src/protocol/host-info.ts';

export interface DialOutOptions {
  /** The link's ws(s):// URL (linkUrl). */
  url: string;
  /** The host credential, read again at each dial: a credential minted anew is picked up without a restart. */
  token(): string;
  logger: Logger;
  /** Serves the host protocol on a link that opened. */
  accept(link: Duplex): void;
  /** First wait before dialing again, doubled per failure up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** How often the link is pinged; one interval without a pong ends it (a dead NAT mapping). */
  pingIntervalMs?: number;
  random?: () => number;
}

export class HostDialer {
  readonly #o: Required<Omit<DialOutOptions, 'random'>> & { random: () => number };
  #failures = 0;
  #stopped = false;
  #socket: WebSocket | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;

  constructor(options: DialOutOptions) {
    this.#o = { baseDelayMs: 500, maxDelayMs: 30_000, pingIntervalMs: 20_000, random: Math.random, ...options };
  }

  /** Dials now, and again whenever the link is lost, until stop(). */
  start(): void {
    this.#dial();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retry);
    this.#socket?.close(1001, 'host stopping');
  }

  #dial(): void {
    const { url, logger } = this.#o;
    let token: string;
    try {
      token = this.#o.token();
    } catch (e) {
      logger.log('error', 'cannot read the host credential', { error: String(e) });
      this.#socket = undefined;
      this.#again(undefined);
      return;
    }
    logger.log('info', 'dialing the router', { url });
    const ws = new WebSocket(url, [HOST_SUBPROTOCOL], { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
    this.#socket = ws;
    let opened = false;
    let pinger: ReturnType<typeof setInterval> | undefined;
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body = (body + chunk).slice(0, 1000)));
      res.on('end', () => {
        logger.log('warn', 'the router refused the link', { status: res.statusCode, body });
        ws.terminate();
      });
      res.on('error', () => ws.terminate());
    });
    ws.on('open', () => {
      opened = true;
      this.#failures = 0;
      logger.log('info', 'linked to the router', { url });
      let alive = true;
      ws.on('pong', () => (alive = true));
      pinger = setInterval(() => {
        if (!alive) return void ws.terminate();
        alive = false;
        ws.ping();
      }, this.#o.pingIntervalMs);
      this.#o.accept(createWebSocketStream(ws));
    });
    ws.on('error', (err) => logger.log('warn', 'link error', { error: err.message }));
    ws.on('close', (code, reason) => {
      clearInterval(pinger);
      if (opened) logger.log('warn', 'link to the router lost', { code, reason: reason.toString() });
      this.#again(ws);
    });
  }

  /** Once per failed or lost link (a refusal fires both its response's end and close). */
  #again(ws: WebSocket | undefined): void {
    if (this.#stopped || this.#retry !== undefined || ws !== this.#socket) return;
    const cap = Math.min(this.#o.maxDelayMs, this.#o.baseDelayMs * 2 ** Math.min(this.#failures, 16));
    this.#failures++;
    // Half fixed, half random: hosts cut off together do not all dial back at once.
    const delay = Math.round(cap / 2 + (this.#o.random() * cap) / 2);
    this.#o.logger.log('info', 'dialing the router again', { in_ms: delay, attempt: this.#failures });
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (!this.#stopped) this.#dial();
    }, delay);
  }
}
