// The credit loop and the replay log's writer: with commits slower than the PTY prints, the router
// withholds the session's credit, so the host pauses the PTY, instead of letting the write queue grow toward the store's
// cap (where it would drop frames). Nothing is lost, and the queue stays near its high mark.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LogCommitter } from '../../storage/log-committer.ts';
import { TestClient } from '../helpers/client.ts';
import { expectNoneLeft } from '../helpers/leftovers.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const SIZE = 40_000_000;
/** Added to every real commit of at most 1 MiB: the database takes ~10 MiB/s, a PTY prints ~40 MB/s. */
const COMMIT_DELAY_MS = 100;
/** The hub's high mark for queued log bytes (16 MiB) plus what is in flight when it pauses. */
const MOST_QUEUED = 20 * 1024 * 1024;

const slowCommits = (committer: LogCommitter): LogCommitter => ({
  commit: async (statements) => {
    await committer.commit(statements);
    await new Promise((r) => setTimeout(r, COMMIT_DELAY_MS));
  },
  close: () => committer.close(),
});

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({}, { 'log-level': 'debug' }, { decorateLogCommitter: slowCommits });
});

afterAll(async () => {
  const dir = server.dir;
  await server.stop();
  await expectNoneLeft(dir);
});

it('a PTY printing faster than the log commits is paused, and every frame reaches the log', async () => {
  let queued = 0;
  let peak = 0;
  server.hub.deps.store.watchQueue({
    queued: (bytes) => {
      queued += bytes;
      peak = Math.max(peak, queued);
    },
    settled: (bytes) => void (queued -= bytes),
  });
  const content = Buffer.from(randomBytes((SIZE / 4) * 3).toString('base64'));
  const file = join(server.dir, 'forty-mb.txt');
  writeFileSync(file, content);

  const rest = new Rest(server.origin, server.devToken);
  const s = await rest.create({ argv: ['/bin/cat', file], terminal_size: { cols: 80, rows: 24 } });
  const c = await TestClient.connect(s.attach_url, { token: server.devToken, protocols: ['pty-ws.v1.binary'] });
  c.send('pty.join_session', { role: 'controller' }, { replay_from: 0 });
  await c.waitFor(() => c.closed, 'the session to end and the server to say goodbye', 120_000);
  expect(c.frames().some((f) => f.op === 'Error')).toBe(false);

  await server.hub.deps.store.flush();
  expect(peak).toBeGreaterThan(0);
  expect(peak).toBeLessThan(MOST_QUEUED);
  // The router withheld this session's credit for its log (session-flow.ts), not only the host
  // holding it at the credit loop's high mark while the router handled its output.
  expect(server.logs.some((l) => l.includes('"session behind: its credit withheld"'))).toBe(true);
  const log = await server.hub.deps.store.readLog(s.session_id, 0);
  const h = createHash('sha256');
  for (const e of log) if (e.kind === 'Output') h.update(Buffer.from(String((JSON.parse(e.frame) as { payload: { data: string } }).payload.data), 'base64'));
  expect(h.digest('hex')).toBe(createHash('sha256').update(content).digest('hex'));
  expect(log.map((e) => e.sequence)).toEqual(log.map((_, i) => 1 + i));
}, 180_000);
