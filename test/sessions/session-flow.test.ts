// The credit loop end to end (docs/architecture.md, "The credit loop"): one session floods while
// its only client has stopped reading, or while the log commits slowly. The router withholds that
// session's credit and the PTY host pauses its PTY alone: another session's echo keeps coming back,
// and the flooding session delivers every byte (nothing lagged, nothing dropped). Real router,
// real PTY host, real libSQL file, real WebSocket clients.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogCommitter } from '../../storage/log-committer.ts';
import { b64, TestClient } from '../helpers/client.ts';
import { expectNoneLeft } from '../helpers/leftovers.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const SIZE = 24_000_000;
/** Added to every real commit of at most 1 MiB: the log takes ~1.25 MiB/s, far below what `cat` prints. */
const COMMIT_DELAY_MS = 800;
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

/** A server for a describe block, stopped with nothing left running. */
function useServer(opts: Parameters<typeof startTestServer>[2] = {}): { server: TestServer } {
  const box = {} as { server: TestServer };
  beforeAll(async () => {
    box.server = await startTestServer({}, { 'log-level': 'debug' }, opts);
  });
  afterAll(async () => {
    const dir = box.server.dir;
    await box.server.stop();
    await expectNoneLeft(dir);
  });
  return box;
}

/**
 * Session A prints SIZE bytes (half a second after it starts) to one client; `stall` may stop that
 * client reading. Session B runs cat and is typed into meanwhile: every echo must come back within
 * ECHO_BOUND_MS. Then A's client reads, and A's bytes must all arrive, without a lag.
 */
async function floodBesideEcho(server: TestServer, stall: boolean): Promise<void> {
  // No newlines, so the terminal's output processing leaves the bytes as they are.
  const content = Buffer.from(randomBytes((SIZE / 4) * 3).toString('base64'));
  const file = join(server.dir, 'flood.txt');
  writeFileSync(file, content);
  const rest = new Rest(server.origin, server.devToken);

  const a = await rest.create({ argv: ['/bin/sh', '-c', `sleep 0.5; exec cat ${file}`], terminal_size: { cols: 80, rows: 24 } });
  const flooded = await TestClient.connect(a.attach_url, { token: server.devToken, protocols: ['pty-ws.v1.binary'] });
  await flooded.join({ role: 'controller' }, { replay_from: 0 });
  const socket = (flooded.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  if (stall) socket.pause();

  const b = await rest.create({ argv: ['/bin/cat'], terminal_size: { cols: 80, rows: 24 } });
  const typist = await TestClient.connect(b.attach_url, { token: server.devToken });
  await typist.join({ role: 'controller' });
  await new Promise((r) => setTimeout(r, 1500));

  for (let i = 0; i < ECHOES; i++) {
    const token = `echo-${i}-${randomBytes(4).toString('hex')}`;
    typist.send('pty.session_input', { data: b64(`${token}\n`) });
    await typist.waitForOutput(token, ECHO_BOUND_MS);
    await new Promise((r) => setTimeout(r, 250));
  }

  socket.resume();
  await flooded.waitFor(() => flooded.closed, 'the flood to end and the server to say goodbye', 120_000);
  const received = outputOf(flooded);
  expect(flooded.frames().find((f) => f.payload.kind === 'Closed')?.payload).toMatchObject({ reason: 'normal', exit_code: 0 });
  expect(flooded.frames().filter((f) => f.op === 'Error' || f.payload.kind === 'Error')).toEqual([]);
  expect(received.reduce((n, p) => n + p.length, 0)).toBe(SIZE);
  expect(sha256(received)).toBe(sha256([content]));
  typist.close();

  // The router withheld A's credit, and A's alone; the host held A's PTY for it.
  const withheld = server.logs.filter((l) => l.includes('"session behind: its credit withheld"'));
  expect(withheld.some((l) => l.includes(a.session_id))).toBe(true);
  expect(withheld.some((l) => l.includes(b.session_id))).toBe(false);
  const held = server.logs.filter((l) => l.includes('"session output held: the router has not taken it"'));
  expect(held.some((l) => l.includes(a.session_id))).toBe(true);
}

describe('a client that stops reading', () => {
  const s = useServer();
  it('pauses its session alone: another session echoes on, and every byte arrives once the client reads', () => floodBesideEcho(s.server, true), 180_000);
});

describe('a log that commits slower than the PTY prints', () => {
  const s = useServer({ decorateLogCommitter: slowCommits });
  it('pauses the session that floods it alone: another session echoes on, and every byte arrives', () => floodBesideEcho(s.server, false), 180_000);
});
