// Deno's WebSocket as a ClientConnection, and the upgrade around Hono's Deno helper: our own
// subprotocol answer, a message size limit and keepalive through Deno's idle timeout.
//
// Differences from the Node adapter (ws), all handled here:
// - Deno's server WebSocket cannot send a Ping on demand: keepalive.ts drives its idle timer so
//   that keepalive is Node's (a Ping every interval, close 1011 past the Pong timeout).
// - Deno has no maximum message size option (it accepts frames up to 64 MiB and drops the
//   connection beyond): a message over `config.maxFrameBytes` closes with 1009 once received,
//   after Deno has buffered all of it; nothing here sees a frame before it is whole
//   (docs/security.md, 8).
// - Deno only accepts a `protocol` when the client's list is separated by ", " exactly (the `ws`
//   client sends "a,b"), and Hono's helper would pick the first entry, which may be a
//   `bearer.<token>`: we upgrade without one and set the negotiated token on the 101 ourselves.
import type { Context } from 'hono';
import { upgradeWebSocket as honoDenoUpgrade } from 'hono/deno';
import { defineWebSocketHelper, type UpgradeWebSocket, type WSEvents } from 'hono/ws';
import type { Metrics } from '../../core/metrics.ts';
import { negotiate } from '../../protocol/subprotocol.ts';
import type { ClientConnection } from '../../ports/client-connection.ts';
import { CLOSE } from '../../protocol/close-codes.ts';

const TEXT = { kind: 'text' };
const BINARY = { kind: 'binary' };

export interface DenoUpgradeOptions {
  maxMessageBytes: number;
  /** Deno's own idle timer (keepalive.ts): it pings at half of it and closes with 1001 at the end. */
  idleTimeoutSeconds: number;
}

export function denoUpgradeWebSocket(opts: DenoUpgradeOptions): UpgradeWebSocket<WebSocket> {
  return defineWebSocketHelper<WebSocket>(async (c: Context, events: WSEvents<WebSocket>) => {
    const selected = selectedProtocol(c.req.header('sec-websocket-protocol'));
    const res = await honoDenoUpgrade(c, limitMessages(events, opts.maxMessageBytes), { protocol: undefined, idleTimeout: opts.idleTimeoutSeconds });
    if (selected) res.headers.set('sec-websocket-protocol', selected);
    return res;
  });
}

/** The routes refused every bad header before the upgrade: here only the token to echo is left. */
function selectedProtocol(header: string | undefined): string | null {
  try {
    return negotiate(header, false).selected;
  } catch {
    return null;
  }
}

function limitMessages(events: WSEvents<WebSocket>, maxBytes: number): WSEvents<WebSocket> {
  return {
    ...events,
    onOpen: (evt, ws) => {
      // Binary frames as ArrayBuffer (the default is Blob, which the routes do not read).
      if (ws.raw) ws.raw.binaryType = 'arraybuffer';
      events.onOpen?.(evt, ws);
    },
    onMessage: (evt, ws) => {
      if (overLimit(evt.data, maxBytes)) {
        ws.close(CLOSE.tooBig, 'message too big');
        return;
      }
      events.onMessage?.(evt, ws);
    },
  };
}

function overLimit(data: unknown, maxBytes: number): boolean {
  if (typeof data === 'string') return data.length > maxBytes || (data.length * 3 > maxBytes && utf8Length(data) > maxBytes);
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return data.byteLength > maxBytes;
  return false;
}

/** UTF-8 length without encoding: a string's code units become 1 to 3 bytes each (a surrogate pair 4). */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) n += c >= 0x800 && (c < 0xd800 || c > 0xdfff) ? 2 : 1;
  }
  return n;
}

export function wrapDenoSocket(ws: WebSocket, binary: boolean, metrics: Metrics): ClientConnection {
  return {
    binary,
    sendText(text) {
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(text);
      metrics.inc('frames_out_total', TEXT);
      metrics.inc('bytes_out_total', TEXT, text.length);
    },
    sendBinary(bytes) {
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(bytes);
      metrics.inc('frames_out_total', BINARY);
      metrics.inc('bytes_out_total', BINARY, bytes.byteLength);
    },
    bufferedAmount: () => ws.bufferedAmount,
    close(code, reason) {
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(code, reason.slice(0, 120));
    },
  };
}
