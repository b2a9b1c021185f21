// Log frames the database never took (a write that kept failing) are declared, not hidden (DECISIONS
// §18): recorded as a lost run, counted in skipped_sequences, and a replay across them gets an Error
// naming them in their place, then a Keyframe; after a restart too. Real router, real libSQL file.
import { describe, expect, it } from 'vitest';
import { TestClient, type Frame } from '../helpers/client.ts';
import { join as joinSession, logFramesOf, maxLoggedSequence } from '../helpers/log-rows.ts';
import { until } from '../helpers/processes.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndDatabase } from '../helpers/server-database.ts';

const servers = serverAndDatabase();

/** Errors naming lost frames: live notices and replay declarations both carry the run in their ErrorInfo. */
const lostErrors = (frames: Frame[]): Frame[] => frames.filter((f) => f.op === 'Error' && lostRun(f) !== undefined);
const lostRun = (f: Frame): { first: number; last: number } | undefined => {
  const metadata = (f.payload.a2a_error as { data?: Array<{ metadata?: Record<string, string> }> } | undefined)?.data?.[0]?.metadata;
  return metadata?.first_lost_sequence === undefined ? undefined : { first: Number(metadata.first_lost_sequence), last: Number(metadata.last_lost_sequence) };
};

/** A joiner's replay from 0: every frame received, the log frames among them, and the join's request id. */
async function replayAll(s: TestServer, sessionId: string): Promise<{ frames: Frame[]; log: Frame[] }> {
  const late = await TestClient.connect(s.attachUrl(sessionId), { token: s.devToken });
  const joinId = await joinSession(late, { role: 'observer' }, { replay_from: 0 });
  late.close();
  return { frames: late.frames(), log: logFramesOf(late, [joinId]) };
}

/** The lost run is declared in the replay where it falls, and a Keyframe follows before anything else is said of the screen. */
function expectDeclared(frames: Frame[], log: Frame[], first: number, last: number): void {
  const [declared, ...more] = lostErrors(frames);
  expect(more).toEqual([]);
  expect(declared!.payload).toMatchObject({ code: 'INTERNAL', first_lost_sequence: first, last_lost_sequence: last });
  expect(declared!.payload.message).toMatch(/the replay skips them, and the next Keyframe repaints the screen/);
  const at = frames.indexOf(declared!);
  const before = log.filter((f) => frames.indexOf(f) < at).map((f) => f.sequence);
  const after = log.filter((f) => frames.indexOf(f) > at).map((f) => f.sequence);
  expect(before.at(-1)).toBeLessThan(first);
  expect(after[0]).toBeGreaterThan(last);
  expect(frames.slice(at + 1).some((f) => f.payload.kind === 'Keyframe')).toBe(true);
}

describe('log frames lost to a write that kept failing', () => {
  it('are declared in a replay across them, counted in skipped_sequences, and stay declared after a restart', { timeout: 90_000 }, async () => {
    const { server, db } = await servers.start();
    const ticker = await server.createSession({ command: 'i=0; while :; do i=$((i+1)); echo tick-$i; sleep 0.05; done' });
    const controller = await TestClient.connect(server.attachUrl(ticker.session_id), { token: server.devToken });
    await joinSession(controller, { role: 'controller' }, { replay_from: 0 });
    await controller.waitForOutput('tick-3');
    // The fault: the log table vanishes under the server until the store gives up on some frames.
    await db.execute('alter table session_log rename to session_log_away');
    const notice = await controller.waitFor(() => lostErrors(controller.frames())[0], 'the loss told live', 20_000);
    await db.execute('alter table session_log_away rename to session_log');
    const { first, last } = lostRun(notice)!;
    expect(last).toBeGreaterThanOrEqual(first);
    await until(async () => (await maxLoggedSequence(db, ticker.session_id)) > last + 5, 'commits to succeed again');

    const live = await replayAll(server, ticker.session_id);
    expectDeclared(live.frames, live.log, first, last);
    // The lost numbers are counted where the other skipped ones are, and recorded.
    const record = (await (await fetch(`${server.origin}/agents/local/sessions/${ticker.session_id}`, { headers: { authorization: `Bearer ${server.devToken}` } })).json()) as { skipped_sequences: number };
    expect(record.skipped_sequences).toBe(last - first + 1);
    const runs = await db.execute({ sql: 'select first_sequence, last_sequence, reason from log_losses where session_id = ?', args: [ticker.session_id] });
    expect(runs.rows.map((r) => [Number(r.first_sequence), Number(r.last_sequence), String(r.reason)])).toEqual([[first, last, 'commit_failed']]);

    // After a restart (the session ends with the server), a replay from 0 still declares the run.
    controller.close();
    const { server: again } = await servers.start({}, {}, { dir: await servers.stopKeepingDir() });
    const restarted = await replayAll(again, ticker.session_id);
    expectDeclared(restarted.frames, restarted.log, first, last);
  });
});
