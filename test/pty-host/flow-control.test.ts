// Flow control between PTY, host and router: 50 MB printed in a PTY while the router is made
// slower than the PTY arrive complete in the session log and at a client that keeps up.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PtyHost } from '../../src/ports/pty-host.ts';
import { TestClient } from '../helpers/client.ts';
import { expectNoneLeft } from '../helpers/leftovers.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const SIZE = 50_000_000;
/** Busy time per 16 KiB of PTY output (at most ~16 MB/s through the router, far below `cat`). */
const SPIN_MS_PER_16K = 1;

/** The PtyHost port with a busy consumer in front of the hub: a router slower than its PTYs. */
function slowConsumer(host: PtyHost): PtyHost {
  return {
    spawn: (spec) => host.spawn(spec),
    write: (id, data) => host.write(id, data),
    resize: (id, cols, rows, done) => host.resize(id, cols, rows, done),
    kill: (id, signal) => host.kill(id, signal),
    list: () => host.list(),
    startEvents: (resume, credit) => host.startEvents(resume, credit),
    ack: (id, n) => host.ack(id, n),
    get epoch() {
      return host.epoch;
    },
    pauseEvents: () => host.pauseEvents(),
    resumeEvents: () => host.resumeEvents(),
    credit: (id, bytes) => host.credit(id, bytes),
    close: () => host.close(),
    subscribe: (listener) =>
      host.subscribe({
        ...listener,
        onData: (id, data, n) => {
          for (const until = performance.now() + (SPIN_MS_PER_16K * data.byteLength) / 16384; performance.now() < until; );
          listener.onData(id, data, n);
        },
      }),
  };
}

const sha256 = (parts: Uint8Array[]): string => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
};

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({}, { 'log-level': 'debug' }, { decoratePtyHost: slowConsumer });
});

afterAll(async () => {
  const dir = server.dir;
  await server.stop();
  await expectNoneLeft(dir);
});

it('50 MB printed in a PTY arrive complete in the log and at a client that keeps up, while the router is slower than the PTY', async () => {
  // No newlines, so the terminal's output processing leaves the bytes as they are.
  const content = Buffer.from(randomBytes((SIZE / 4) * 3).toString('base64'));
  expect(content.length).toBe(SIZE);
  const file = join(server.dir, 'fifty-mb.txt');
  writeFileSync(file, content);
  const expected = sha256([content]);

  const rest = new Rest(server.origin, server.devToken);
  const s = await rest.create({ argv: ['/bin/cat', file], terminal_size: { cols: 80, rows: 24 } });
  const c = await TestClient.connect(s.attach_url, { token: server.devToken, protocols: ['pty-ws.v1.binary'] });
  // replay_from 0: what the program printed before the join finished comes as replayed frames.
  c.send('pty.join_session', { role: 'controller' }, { replay_from: 0 });
  await c.waitFor(() => c.closed, 'the session to end and the server to say goodbye', 180_000);

  // At the client: live PW1O frames and JSON Output frames, in the order they came.
  const received = c.received.flatMap((r) => {
    if (r.type === 'binary') return [r.data.subarray(13)];
    return r.frame.payload.kind === 'Output' ? [Buffer.from(String(r.frame.payload.data), 'base64')] : [];
  });
  const closed = c.frames().find((f) => f.payload.kind === 'Closed');
  expect(closed?.payload).toMatchObject({ reason: 'normal', exit_code: 0 });
  expect(received.reduce((n, b) => n + b.length, 0)).toBe(SIZE);
  expect(sha256(received)).toBe(expected);
  expect(c.frames().some((f) => f.op === 'Error')).toBe(false);

  // In the session log, read back from the store.
  const log = await server.hub.deps.store.readLog(s.session_id, 0);
  const logged = log.filter((e) => e.kind === 'Output').map((e) => Buffer.from(String((JSON.parse(e.frame) as { payload: { data: string } }).payload.data), 'base64'));
  expect(sha256(logged)).toBe(expected);
  const seqs = log.map((e) => e.sequence);
  expect(seqs).toEqual(seqs.map((_, i) => 1 + i));

  // The host did have to hold the PTY back (the session's credit loop at its high mark,
  // docs/protocol.md §9.3, or every PTY for a full socket), and the screen model kept every byte too.
  expect(server.logs.some((l) => l.includes('"session output held: the router has not taken it"') || l.includes('"output paused"'))).toBe(true);
  const after = await TestClient.connect(s.attach_url, { token: server.devToken });
  await after.join({ role: 'observer' });
  expect(after.screen()).toContain(content.subarray(SIZE - 60).toString());
}, 240_000);
