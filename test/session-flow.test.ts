// Per-session flow control end to end (issue 17; docs/architecture.md, "Router flow control"):
// one session floods while its only client has stopped reading and the log commits slowly. That
// session's PTY is paused alone, at the PTY host: another session's echo keeps coming back, and
// the flooding session delivers every byte once its client reads again (nothing lagged, nothing
// dropped). Real router, real PTY host, real libSQL file, real WebSocket clients.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LogCommitter } from '../storage/log-committer.ts';
import { b64, TestClient } from './helpers/client.ts';
import { expectNoneLeft } from './helpers/leftovers.ts';
import { Rest } from './helpers/rest.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const SIZE = 24_000_000;
/** Added to every real commit of at most 1 MiB: the log takes ~2.5 MiB/s, far below what `cat` prints. */
const COMMIT_DELAY_MS = 400;
/** How long one echo round trip of the other session may take: generous, it takes milliseconds. */
const ECHO_BOUND_MS = 3000;
const ECHOES = 12;

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

const outputOf = (c: TestClient): Buffer[] =>
  c.received.flatMap((r) => {
    if (r.type === 'binary') return [r.data.subarray(13)];
    return r.frame.payload.kind === 'Output' ? [Buffer.from(String(r.frame.payload.data), 'base64')] : [];
  });

const sha256 = (parts: Uint8Array[]): string => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
};

it('a flooding session whose client stops reading is paused alone: another session echoes on, and it delivers every byte once its client reads', async () => {
  // No newlines, so the terminal's output processing leaves the bytes as they are.
  const content = Buffer.from(randomBytes((SIZE / 4) * 3).toString('base64'));
  const file = join(server.dir, 'flood.txt');
  writeFileSync(file, content);
  const rest = new Rest(server.origin, server.devToken);

  // A: prints the file half a second after its start, to a client that stops reading at once.
  const a = await rest.create({ argv: ['/bin/sh', '-c', `sleep 0.5; exec cat ${file}`], terminal_size: { cols: 80, rows: 24 } });
  const flooded = await TestClient.connect(a.attach_url, { token: server.devToken, protocols: ['pty-ws.v1.binary'] });
  await flooded.join({ role: 'controller' }, { replay_from: 0 });
  const socket = (flooded.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  socket.pause();

  // B: a terminal running cat, typed into while A floods.
  const b = await rest.create({ argv: ['/bin/cat'], terminal_size: { cols: 80, rows: 24 } });
  const typist = await TestClient.connect(b.attach_url, { token: server.devToken });
  await typist.join({ role: 'controller' });
  await new Promise((r) => setTimeout(r, 1500));

  const slowest = { ms: 0 };
  for (let i = 0; i < ECHOES; i++) {
    const token = `echo-${i}-${randomBytes(4).toString('hex')}`;
    const t0 = performance.now();
    typist.send('pty.session_input', { data: b64(`${token}\n`) });
    await typist.waitForOutput(token, ECHO_BOUND_MS);
    slowest.ms = Math.max(slowest.ms, performance.now() - t0);
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(slowest.ms).toBeLessThan(ECHO_BOUND_MS);

  // The host paused A's PTY, and only A's.
  const paused = server.logs.filter((l) => l.includes('"session output paused"'));
  expect(paused.some((l) => l.includes(a.session_id))).toBe(true);
  expect(paused.some((l) => l.includes(b.session_id))).toBe(false);

  // A's client reads again: everything arrives, in order, without a lag.
  socket.resume();
  await flooded.waitFor(() => flooded.closed, 'the flood to end and the server to say goodbye', 120_000);
  const received = outputOf(flooded);
  expect(flooded.frames().find((f) => f.payload.kind === 'Closed')?.payload).toMatchObject({ reason: 'normal', exit_code: 0 });
  expect(flooded.frames().filter((f) => f.op === 'Error' || f.payload.kind === 'Error')).toEqual([]);
  expect(received.reduce((n, p) => n + p.length, 0)).toBe(SIZE);
  expect(sha256(received)).toBe(sha256([content]));
  typist.close();
}, 180_000);
