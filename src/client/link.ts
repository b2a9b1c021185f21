// When a lost connection is worth retrying, how long to wait, and how a silent link is noticed.
import { requestFrame } from './frames.ts';
import { OPEN, type WebSocketLike } from './websocket.ts';

/** Closes after which reconnecting cannot help (docs/protocol.md §7.2): protocol, auth, unknown session, capacity, too big. */
const FINAL_CLOSE_CODES = new Set([1008, 1009, 4400, 4401, 4403, 4404, 4429]);
/** Upgrade refusals `ws` reports as "Unexpected server response: N" that a retry will not change. */
const FINAL_HTTP = /Unexpected server response: (400|401|403|404)\b/;

export function isFinalClose(code: number, socketError: string | undefined): boolean {
  return FINAL_CLOSE_CODES.has(code) || FINAL_HTTP.test(socketError ?? '');
}

export interface BackoffOptions {
  minDelayMs?: number;
  maxDelayMs?: number;
  maxAttempts?: number;
}

/** The wait before reconnect attempt `attempt` (1-based): doubling from min to max, ±25 % jitter; null once attempts run out. */
export function backoffDelay(attempt: number, opts: BackoffOptions | false | undefined): number | null {
  if (opts === false) return null;
  const { minDelayMs = 250, maxDelayMs = 5000, maxAttempts = Infinity } = opts ?? {};
  if (attempt > maxAttempts) return null;
  const base = Math.min(maxDelayMs, minDelayMs * 2 ** (attempt - 1));
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/**
 * Application pings on one socket. Any frame received counts as an answer; none within `timeoutMs`
 * of a ping means the path is dead even if the socket has not noticed (half-open TCP).
 */
export class Keepalive {
  private ping: ReturnType<typeof setInterval> | undefined;
  private pong: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly opts: { intervalMs: number; timeoutMs: number } | false = { intervalMs: 15_000, timeoutMs: 10_000 }) {}

  start(ws: WebSocketLike, onDead: () => void): void {
    const k = this.opts;
    if (!k) return;
    this.stop();
    this.ping = setInterval(() => {
      if (ws.readyState !== OPEN) return;
      ws.send(requestFrame('ping', { client_ts: new Date().toISOString() }).text);
      this.pong ??= setTimeout(onDead, k.timeoutMs);
    }, k.intervalMs);
  }

  /** Something arrived: the link is alive. */
  heard(): void {
    clearTimeout(this.pong);
    this.pong = undefined;
  }

  stop(): void {
    clearInterval(this.ping);
    this.heard();
    this.ping = undefined;
  }
}
