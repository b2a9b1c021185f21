// A Node connection's batch (ClientConnection.batch, src/adapter/node/socket-batch.ts): the sends
// made in it reach the TCP socket as a few large writes, not one per frame, every message whole
// and in order. Real `ws` server and client over loopback TCP.
import type { Socket } from 'node:net';
import type { WSContext } from 'hono/ws';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { BATCH_FLUSH_BYTES } from '../../src/adapter/node/socket-batch.ts';
import { wrapNodeSocket } from '../../src/adapter/node/ws-connection.ts';
import { NO_METRICS } from '../../src/core/metrics.ts';
import type { ClientConnection } from '../../src/ports/client-connection.ts';
import { until } from '../helpers/wait.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

type Writes = Socket & { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };

/** A server-side connection, what its peer received, and a count of the writes its socket started. */
async function pair(): Promise<{ conn: ClientConnection & { dispose(): void }; received: string[]; writes: () => number }> {
  const wss = new WebSocketServer({ port: 0, perMessageDeflate: false });
  await new Promise((r) => wss.once('listening', r));
  const accepted = new Promise<WebSocket>((r) => wss.once('connection', r));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as { port: number }).port}`, { perMessageDeflate: false });
  const received: string[] = [];
  client.on('message', (data: Buffer) => received.push(data.toString('utf8')));
  client.on('error', () => undefined);
  const [ws] = await Promise.all([accepted, new Promise((r) => client.once('open', r))]);
  const conn = wrapNodeSocket({ raw: ws } as unknown as WSContext, false, { pingIntervalMs: 60_000, pongTimeoutMs: 120_000 }, () => undefined, NO_METRICS);
  // Every write a Node socket hands the kernel starts in one of these two (Node's Writable).
  const socket = (ws as unknown as { _socket: Writes })._socket;
  let writes = 0;
  for (const name of ['_write', '_writev'] as const) {
    const original = socket[name].bind(socket);
    socket[name] = (...args: unknown[]) => {
      writes++;
      original(...args);
    };
  }
  cleanups.push(() => {
    conn.dispose();
    client.terminate();
    wss.close();
  });
  return { conn, received, writes: () => writes };
}

const message = (i: number, size: number) => JSON.stringify({ i, pad: 'x'.repeat(size) });

describe('a Node connection batch', () => {
  it('writes a thousand frames as one write', async () => {
    const { conn, received, writes } = await pair();
    const sent = Array.from({ length: 1000 }, (_, i) => message(i, 150));
    conn.batch!(() => {
      for (const m of sent) conn.sendText(m);
    });
    expect(writes()).toBe(1);
    await until(() => received.length === sent.length, 'every message');
    expect(received).toEqual(sent);
  });

  it('starts writing what it gathered once BATCH_FLUSH_BYTES are in, and nests', async () => {
    const { conn, received, writes } = await pair();
    const sent = Array.from({ length: 2000 }, (_, i) => message(i, 400));
    const upTo = (n: number) => sent.slice(0, n).reduce((bytes, m) => bytes + m.length, 0);
    const firstFlush = sent.findIndex((_, i) => upTo(i + 1) >= BATCH_FLUSH_BYTES);
    const during: number[] = [];
    conn.batch!(() => {
      for (const m of sent.slice(0, 1000)) {
        conn.sendText(m);
        during.push(writes());
      }
      // A batch within one adds nothing: its sends belong to the outer one.
      conn.batch!(() => {
        for (const m of sent.slice(1000)) conn.sendText(m);
      });
    });
    // Nothing reaches the socket until a flush's worth is gathered; then the kernel gets it while the batch goes on.
    expect(during.slice(0, firstFlush)).toEqual(during.slice(0, firstFlush).map(() => 0));
    expect(during[firstFlush]).toBe(1);
    await until(() => received.length === sent.length, 'every message');
    expect(received).toEqual(sent);
    expect(writes()).toBeLessThanOrEqual(Math.ceil(upTo(sent.length) / BATCH_FLUSH_BYTES) + 1);
  });
});
