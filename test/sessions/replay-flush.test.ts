// A join's replay is written to the socket in batches (src/adapter/node/socket-batch.ts,
// docs/performance.md): its frames must still arrive whole and in order, and the output printed
// while the replay was being read and sent must follow the Keyframe, none skipped or repeated
// (docs/protocol.md §6.1). Real router, PTY host, libSQL and `ws` client.
import { afterEach, describe, expect, it } from 'vitest';
import { TestClient, type Frame } from '../helpers/client.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { until } from '../helpers/wait.ts';

let server: TestServer | null = null;
const clients: TestClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server?.stop();
  server = null;
});

/** Numbered 400-byte lines, a few every millisecond, for as long as it runs: output flows throughout the join. */
const PRINTER = `let i = 0; setInterval(() => { let s = ''; for (let k = 0; k < 4; k++) s += ('<' + i++ + '>').padEnd(399, '.') + '\\n'; process.stdout.write(s); }, 1);`;

/** The log frames of a join, split at its Keyframe (the one answering the join's id). */
function split(frames: Frame[], joinId: string): { before: Frame[]; keyframe: Frame; after: Frame[] } {
  const k = frames.findIndex((f) => f.id === joinId && f.payload.kind === 'Keyframe');
  const logged = (f: Frame) => f.op === 'pty.session_frame' && f.id !== joinId;
  return { before: frames.slice(0, k).filter(logged), keyframe: frames[k]!, after: frames.slice(k + 1).filter(logged) };
}

describe('a join replaying while output flows', { timeout: 120_000 }, () => {
  it('gets every replayed frame whole and in order, then the Keyframe, then the output held meanwhile', async () => {
    server = await startTestServer();
    const rest = new Rest(server.origin, server.devToken);
    const { session_id: id } = await rest.create({ argv: [process.execPath, '-e', PRINTER] });
    // The first join starts the process.
    const starter = await TestClient.connect(server.attachUrl(id), { token: server.devToken });
    clients.push(starter);
    await starter.join({ role: 'controller' });
    const current = await until(async () => {
      const logged = (await rest.get(id)).current_sequence ?? 0;
      return logged > 800 && logged;
    }, 'the printer to log 800 frames', 60_000);
    const from = current - 600;

    const c = await TestClient.connect(server.attachUrl(id), { token: server.devToken });
    clients.push(c);
    const joinId = c.send('pty.join_session', { role: 'observer' }, { replay_from: from });
    await c.waitForFrame((f) => f.id === joinId && f.payload.kind === 'Keyframe', 'the join Keyframe', 60_000);
    // Output printed during the flush, and after it.
    await c.waitFor(() => split(c.frames(), joinId).after.length >= 200, '200 log frames after the Keyframe', 60_000);

    const frames = c.frames();
    expect(frames[0]!.op).toBe('binding_hello');
    expect(frames[1]!.payload).toMatchObject({ kind: 'RoleAssigned' });
    const { before, keyframe, after } = split(frames.slice(2), joinId);
    // The replay: every frame after `from`, up to and with the join's own MembershipChanged, the last before the Keyframe.
    expect(before.map((f) => f.sequence)).toEqual(before.map((_, i) => from + 1 + i));
    expect(before.length).toBeGreaterThan(500);
    const joined = before.at(-1)!;
    expect(joined.payload.kind).toBe('MembershipChanged');
    expect(keyframe.sequence).toBe(joined.sequence);
    // What was logged meanwhile and since: the very next frames, none skipped, none repeated.
    expect(after.map((f) => f.sequence)).toEqual(after.map((_, i) => joined.sequence + 1 + i));

    // Whole frames: the printed lines, from the first complete one on, count up without a gap.
    const text = c.output();
    const numbers = [...text.matchAll(/<(\d+)>\.+\r\n/g)].map((m) => Number(m[1]));
    expect(numbers.length).toBeGreaterThan(1000);
    expect(numbers).toEqual(numbers.map((_, i) => numbers[0]! + i));
    expect(text.slice(text.indexOf('\n') + 1)).toMatch(/^(<\d+>\.+\r\n)*[^\n]*$/);
  });
});
