// The scrollback a first join replays (the page on reload, a late joiner) is bounded by bytes as
// well as frames (docs/protocol.md §6.2, `replay_max_bytes`): after huge frames only the newest
// MiB comes, after small ones all of them. Real router, PTY host, shell and libSQL.
import { afterEach, describe, expect, it } from 'vitest';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import type { PtyClientOptions } from '../../src/client/types.ts';
import { ClientProbe } from '../helpers/probe.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer | null = null;
const clients: PtyClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server?.stop();
  server = null;
});

const MiB = 1024 * 1024;

function client(s: TestServer, sessionId: string, opts: Partial<PtyClientOptions>): PtyClient {
  const c = new PtyClient({ url: s.attachUrl(sessionId), token: s.devToken, webSocket: nodeWebSocket(), size: { cols: 80, rows: 24 }, ...opts });
  clients.push(c);
  return c;
}

/** A late observer's first join: the output replayed before it is live (the join's Keyframe), as text. */
async function replayed(s: TestServer, sessionId: string, opts: Partial<PtyClientOptions>): Promise<string> {
  const c = client(s, sessionId, { role: 'observer', binary: true, ...opts });
  const chunks: Uint8Array[] = [];
  c.on('output', (data) => {
    if (c.state !== 'live') chunks.push(data);
  });
  await c.connect();
  c.close();
  return Buffer.concat(chunks).toString('utf8');
}

describe('scrollback replay', { timeout: 120_000 }, () => {
  it('keeps to its byte cap after huge frames, and still brings every small frame', async () => {
    server = await startTestServer();
    const id = server.defaultSession!.id;
    const writer = new ClientProbe(client(server, id, { role: 'controller' }));
    await writer.client.connect();
    // 3 MB in the largest frames the PTY gives, then a few small lines.
    writer.client.send("head -c 3000000 /dev/zero | tr '\\0' x; echo; for i in $(seq 1 40); do echo small-$i; done; echo done-$((6*7))\r");
    await writer.waitForOutput('done-42', 60_000);

    const capped = await replayed(server, id, { scrollbackFrames: 1000, scrollbackBytes: MiB });
    // Only the newest frames, up to 1 MiB of JSON (base64: three bytes of output in four)...
    expect(capped.length).toBeLessThanOrEqual(MiB);
    expect(capped.length).toBeGreaterThan(MiB / 2);
    // ...and every small frame at the end is among them.
    for (const i of [1, 20, 40]) expect(capped).toContain(`small-${i}\r\n`);
    expect(capped).toContain('done-42');

    // Bounded by frames only, the same join pulls megabytes.
    const uncapped = await replayed(server, id, { scrollbackFrames: 1000 });
    expect(uncapped.length).toBeGreaterThan(2 * MiB);
  });
});
