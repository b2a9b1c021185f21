// The replay log in the real database after real PTY output: retention by count and by age
// (docs/protocol.md §6.5, Keyframes counted) and several sessions writing at once.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TestClient, type Frame } from '../helpers/client.ts';
import { join as joinSession, logFramesOf, readLogRows, type LogRow } from '../helpers/log-rows.ts';
import { serverAndDatabase } from '../helpers/server-database.ts';

const servers = serverAndDatabase();

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * Runs `command` in a new session under the given retention, one Keyframe every `keyframeEvery`
 * Output frames, and one client attached from its first frame. Resolves once it has ended and its
 * log is committed, with the rows left and every frame the client got (all of 1..last).
 */
async function runToEnd(
  command: string,
  retention: { frames: number; seconds: number; keyframeEvery: number },
  whileRunning?: (c: TestClient) => Promise<void>,
): Promise<{ rows: LogRow[]; live: Frame[]; last: Frame }> {
  const { server, db } = await servers.start(
    { PTY_WS_KEYFRAME_INTERVAL_FRAMES: String(retention.keyframeEvery), PTY_WS_KEYFRAME_INTERVAL_SECONDS: '3600' },
    {},
    { belowSpecRetention: { frames: retention.frames, seconds: retention.seconds } },
  );
  const { session_id: id } = await server.createSession({ command });
  const c = await TestClient.connect(server.attachUrl(id), { token: server.devToken });
  const joined = await joinSession(c, { role: 'controller' }, { replay_from: 0 });
  await whileRunning?.(c);
  await c.waitForFrame((f) => f.payload.kind === 'Closed', 'the process to end', 30_000);
  await server.hub.deps.store.flush();
  c.close();
  const live = logFramesOf(c, [joined]);
  const last = live.at(-1)!;
  expect(last.payload.kind).toBe('Closed');
  expect(live.map((f) => f.sequence)).toEqual(range(1, last.sequence));
  return { rows: await readLogRows(db, id), live, last };
}

describe('retention (the larger of replay_buffer_frames and replay_buffer_retention_seconds)', () => {
  it('keeps the newest frames by count when few are recent, Keyframes counted', { timeout: 60_000 }, async () => {
    // Early lines until the client has seen 100 Output frames, a pause longer than the retention
    // age, then 20 more: at every prune during the last burst fewer than 50 frames are recent, so
    // the count rule decides. One Keyframe per Output frame makes half the log Keyframes. The
    // early burst runs until the frames are there, not for a fixed number of lines: a router
    // stalled by a loaded machine gets a burst of lines as a few large frames (400 lines once came
    // as 3 Output frames, the whole log 8 frames), and a log of fewer than 50 frames keeps them all.
    const stop = join(tmpdir(), `pty-ws-retention-${process.pid}-${Date.now()}`);
    const command = `i=0; while [ ! -e ${stop} ]; do i=$((i+1)); echo early-$i; sleep 0.01; done; sleep 1.5; for i in $(seq 1 20); do echo late-$i; sleep 0.01; done`;
    const enoughFrames = async (c: TestClient): Promise<void> => {
      await c.waitFor(() => c.frames().filter((f) => f.payload.kind === 'Output').length >= 100, '100 Output frames', 40_000);
      writeFileSync(stop, '');
    };
    const { rows, live, last } = await runToEnd(command, { frames: 50, seconds: 1, keyframeEvery: 1 }, enoughFrames).finally(() => rmSync(stop, { force: true }));
    expect(last.sequence).toBeGreaterThan(100);

    // What is kept is the newest stretch of the log, as sent.
    expect(rows.map((r) => r.sequence)).toEqual(range(rows[0]!.sequence, last.sequence));
    for (const row of rows) expect(row.frame).toEqual(live[row.sequence - 1]);
    // Never fewer than 50 frames; old ones did go. Pruning runs every 16 frames, so up to that
    // many more may have arrived since its last run; were Keyframes not counted, twice 50 would stay.
    expect(rows.length).toBeGreaterThanOrEqual(50);
    expect(rows.length).toBeLessThan(50 + 2 * 16);
    expect(rows[0]!.sequence).toBeGreaterThan(1);
    expect(rows.filter((r) => r.kind === 'Keyframe').length).toBeGreaterThanOrEqual(20);
    // The count rule kept frames the age rule alone would have dropped.
    expect(rows.some((r) => r.frame.payload.kind === 'Output' && String(Buffer.from(String(r.frame.payload.data), 'base64')).includes('early-'))).toBe(true);
    expect(rows[0]!.createdAt).toBeLessThan(Date.parse(last.ts) - 1000);
  });

  it('keeps every recent frame by age when they outnumber the count, and drops the older ones', { timeout: 30_000 }, async () => {
    // 40 lines, a pause longer than the 2 s retention age, then 40 more (with their Keyframes
    // about 60 frames, all within 2 s): every frame of the last burst stays, none before it. The
    // pause is 5 s: frames are stamped when the router logs them, and a router that a loaded
    // machine stalls for a second stamps the early ones late (a 3 s pause once measured under 2 s).
    const { rows, live, last } = await runToEnd('for i in $(seq 1 40); do echo early-$i; sleep 0.01; done; sleep 5; for i in $(seq 1 40); do echo late-$i; sleep 0.01; done', {
      frames: 10,
      seconds: 2,
      keyframeEvery: 2,
    });
    // The pause: the last gap of more than 2 s between consecutive frames before the first late
    // line (a router stalled at the start by a loaded machine can leave another one before it).
    const firstLate = live.find((f) => f.payload.kind === 'Output' && Buffer.from(String(f.payload.data), 'base64').toString().includes('late-'))!;
    const gaps = live.slice(1).map((f, i) => ({ at: f.sequence, ms: Date.parse(f.ts) - Date.parse(live[i]!.ts) })).filter((g) => g.ms > 2000 && g.at <= firstLate.sequence);
    expect(gaps.length).toBeGreaterThan(0);
    const lastBurst = range(gaps.at(-1)!.at, last.sequence);

    expect(rows.map((r) => r.sequence)).toEqual(lastBurst);
    for (const row of rows) expect(row.frame).toEqual(live[row.sequence - 1]);
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.some((r) => r.kind === 'Keyframe')).toBe(true);
  });
});

describe('several sessions writing at once', () => {
  it('each log holds every frame its client received, in order, without gaps', { timeout: 60_000 }, async () => {
    const { server, db } = await servers.start();
    const lines = 3000;
    const sessions = await Promise.all(
      range(1, 4).map(async (n) => {
        // One line per millisecond: most lines reach the server as a frame of their own.
        const script = `let i = 0; const t = setInterval(() => { i++; process.stdout.write("s${n}-line-" + i + "\\n"); if (i === ${lines}) clearInterval(t); }, 1);`;
        const { session_id: id } = await server.createSession({ argv: [process.execPath, '-e', script] });
        return { n, id, client: await TestClient.connect(server.attachUrl(id), { token: server.devToken }) };
      }),
    );
    // All four start at once: their processes spawn on these joins.
    const joins = await Promise.all(sessions.map((s) => joinSession(s.client, { role: 'controller' }, { replay_from: 0 })));
    await Promise.all(sessions.map((s) => s.client.waitForFrame((f) => f.payload.kind === 'Closed', `session ${s.n} to end`, 45_000)));
    await server.hub.deps.store.flush();

    for (const [i, s] of sessions.entries()) {
      const received = logFramesOf(s.client, [joins[i]!]);
      const rows = await readLogRows(db, s.id);
      expect(rows.map((r) => r.sequence)).toEqual(range(1, received.length));
      expect(rows.map((r) => r.frame)).toEqual(received);
      const printed = rows
        .filter((r) => r.kind === 'Output')
        .map((r) => Buffer.from(String(r.frame.payload.data), 'base64').toString('utf8'))
        .join('');
      expect(printed).toBe(range(1, lines).map((k) => `s${s.n}-line-${k}\r\n`).join(''));
      s.client.close();
    }
  });
});
