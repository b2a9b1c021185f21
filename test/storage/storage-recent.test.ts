// The newest committed log frames kept in memory for replays (storage/recent-log.ts), and the
// replay read of a file database on its own connection (src/adapter/node/file-log-reader.ts):
// whatever they serve must be exactly what the database holds.
import type { Client } from '@libsql/client';
import { beforeEach, describe, expect, it } from 'vitest';
import { fileLogReaderFor } from '../../src/adapter/node/file-log-reader.ts';
import type { LogEntry } from '../../src/protocol/logged-frames.ts';
import { OutputFrame, outputEntry } from '../../src/protocol/output-frame.ts';
import { logEntryOfValues } from '../../storage/log-rows.ts';
import { ENTRY_OVERHEAD, RecentLog } from '../../storage/recent-log.ts';
import { tempDatabase } from '../helpers/temp-database.ts';

const output = (sessionId: string, sequence: number, bytes: number, createdAt = 1_000_000): LogEntry =>
  outputEntry(sessionId, new OutputFrame(`f-${sessionId}-${sequence}`, sequence, createdAt, new Uint8Array(bytes).fill(sequence % 256)));

const note = (sessionId: string, sequence: number, createdAt = 1_000_000): LogEntry => ({
  sessionId,
  sequence,
  kind: 'MembershipChanged',
  createdAt,
  frame: JSON.stringify({ op: 'pty.session_frame', sequence, payload: { kind: 'MembershipChanged' } }),
});

const seqs = (entries: readonly LogEntry[] | undefined): number[] | undefined => entries?.map((e) => e.sequence);

/** An entry's cost in the budgets: its bytes and its objects. */
const COST = 1000 + ENTRY_OVERHEAD;

describe('RecentLog', () => {
  it('serves a range only while every committed frame in it is kept', () => {
    const recent = new RecentLog({ perSession: 3 * COST, total: 100 * COST });
    expect(recent.after('s', 0)).toBeUndefined();
    recent.committed([5, 6, 7].map((n) => output('s', n, 1000)));
    // Frames before 5 may be in the database (an earlier run): from 4 on is known, not before.
    expect(seqs(recent.after('s', 4))).toEqual([5, 6, 7]);
    expect(recent.after('s', 3)).toBeUndefined();
    expect(seqs(recent.after('s', 6))).toEqual([7]);
    expect(seqs(recent.after('s', 7))).toEqual([]);
    expect(seqs(recent.after('s', 4, 2))).toEqual([5, 6]);
    // A fourth frame lets the oldest go: 5 is now only in the database.
    recent.committed([output('s', 9, 1000)]);
    expect(recent.after('s', 4)).toBeUndefined();
    expect(seqs(recent.after('s', 5))).toEqual([6, 7, 9]);
    // A gap in the numbers (a frame given up on) is a gap in the database too.
    expect(seqs(recent.after('s', 7))).toEqual([9]);
  });

  it('gives up the frames of the session that committed least recently when the total is exceeded', () => {
    const recent = new RecentLog({ perSession: 10 * COST, total: 5 * COST });
    recent.committed([1, 2].map((n) => output('a', n, 1000)));
    recent.committed([1, 2].map((n) => output('b', n, 1000)));
    recent.committed([3].map((n) => output('a', n, 1000)));
    expect(seqs(recent.after('a', 0))).toEqual([1, 2, 3]);
    expect(seqs(recent.after('b', 0))).toEqual([1, 2]);
    recent.committed([4].map((n) => output('a', n, 1000)));
    expect(recent.after('b', 0)).toBeUndefined();
    expect(seqs(recent.after('a', 0))).toEqual([1, 2, 3, 4]);
    // b starts again from its next commit.
    recent.committed([output('b', 3, 10)]);
    expect(seqs(recent.after('b', 2))).toEqual([3]);
    expect(recent.after('b', 1)).toBeUndefined();
  });

  it('with no budget keeps nothing yet still knows that nothing was committed after the last frame', () => {
    const recent = new RecentLog({ perSession: 0, total: 0 });
    recent.committed([1, 2].map((n) => output('s', n, 10)));
    expect(recent.after('s', 0)).toBeUndefined();
    expect(recent.after('s', 1)).toBeUndefined();
    expect(seqs(recent.after('s', 2))).toEqual([]);
  });

  it('lets go of what retention deleted, by age beyond the newest frames kept by count', () => {
    const recent = new RecentLog({ perSession: 100 * COST, total: 100 * COST });
    recent.committed([1, 2, 3, 4, 5, 6].map((n) => note('s', n, n <= 4 ? 1000 : 5000)));
    // The database deletes frames older than 2000 and beyond the newest 3: 1, 2 and 3.
    recent.pruned('s', 2000, 3);
    expect(recent.after('s', 2)).toBeUndefined();
    expect(seqs(recent.after('s', 3))).toEqual([4, 5, 6]);
    // Without a count rule every frame older than the age goes.
    recent.pruned('s', 2000, 0);
    expect(recent.after('s', 3)).toBeUndefined();
    expect(seqs(recent.after('s', 4))).toEqual([5, 6]);
  });

  it('forgets a session whose frames arrive out of order rather than serve a run with a hole', () => {
    const recent = new RecentLog({ perSession: 100 * COST, total: 100 * COST });
    recent.committed([3, 4].map((n) => note('s', n)));
    recent.committed([note('s', 2)]);
    expect(recent.after('s', 1)).toBeUndefined();
    expect(recent.after('s', 3)).toBeUndefined();
    expect(seqs(recent.after('s', 4))).toEqual([]);
    recent.committed([note('s', 5)]);
    expect(seqs(recent.after('s', 4))).toEqual([5]);
  });

  it('charges a view the whole read it keeps alive, and hands out frames of their own', () => {
    const read = new Uint8Array(64 * 1024).fill(7);
    const recent = new RecentLog({ perSession: 2 * (64 * 1024 + ENTRY_OVERHEAD), total: 1024 * 1024 });
    recent.committed([1, 2, 3].map((n) => outputEntry('s', new OutputFrame(`f-${n}`, n, 1, read.subarray(n * 10, n * 10 + 10)))));
    // Three views of one 64 KiB read: only two fit, though their own bytes are 30.
    expect(recent.after('s', 0)).toBeUndefined();
    const [two, three] = recent.after('s', 1)!;
    expect(Array.from(three!.output!.data)).toEqual(new Array(10).fill(7));
    // What a reader builds from a frame (its JSON) stays with that reader's copy.
    expect(recent.after('s', 1)![0]!.output).not.toBe(two!.output);
    expect(two!.frame).toContain('"sequence":2');
  });
});

describe('a store with recent frames in memory', () => {
  const db = tempDatabase('pty-ws-recent-');
  const { open } = db;

  /** What the database holds after `after`, read on a connection of the test's own. */
  async function stored(sessionId: string, after: number): Promise<Array<[number, string]>> {
    raw ??= db.rawClient();
    const { rows } = await raw.execute({ sql: 'select sequence, kind, created_at, frame, output, frame_id from session_log where session_id = ? and sequence > ? order by sequence', args: [sessionId, after] });
    return rows.map((row) => [Number(row[0]), logEntryOfValues(sessionId, row).frame]);
  }
  let raw: Client | undefined;
  beforeEach(() => {
    raw = undefined;
  });

  const shape = (entries: readonly LogEntry[]): Array<[number, string]> => entries.map((e) => [e.sequence, e.frame]);

  it('reads every range exactly as the database holds it, through budgets, retention and gaps in the numbers', async () => {
    // Small budgets, so that reads cross the line between memory and the database all the time.
    const store = await open({ recentLog: { perSession: 8 * 1024, total: 20 * 1024 }, logReaderFor: fileLogReaderFor });
    let seed = 1;
    const random = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const next = new Map<string, number>();
    const sessions = ['a', 'b', 'c'];
    for (let round = 0; round < 12; round++) {
      for (let i = 0; i < 40; i++) {
        const id = sessions[random(3)]!;
        const sequence = (next.get(id) ?? 0) + 1 + (random(10) === 0 ? 1 : 0);
        next.set(id, sequence);
        store.appendLog(random(4) === 0 ? note(id, sequence, round * 1000) : output(id, sequence, 1 + random(900), round * 1000));
      }
      await store.flush();
      // Retention that reaches into what memory keeps: few frames by count, one round by age.
      if (round % 3 === 2) await store.prune(sessions[random(3)]!, { keepFrames: random(12), keepSeconds: 1, now: round * 1000 });
      for (const id of sessions) {
        const last = next.get(id) ?? 0;
        for (let after = Math.max(0, last - 45); after <= last; after++) {
          expect(shape(await store.readLog(id, after)), `${id} after ${after}, round ${round}`).toEqual(await stored(id, after));
        }
        expect(shape(await store.readLog(id, 0))).toEqual(await stored(id, 0));
      }
    }
  });

  it('reads the same rows through the file reader as through the client, and a reopened store reads what the last one committed', async () => {
    const first = await open({ logReaderFor: fileLogReaderFor });
    for (let n = 1; n <= 50; n++) first.appendLog(n % 5 ? output('s', n, 300) : note('s', n));
    await first.close();
    db.untrack(first);
    // Nothing in memory now: every read is the database's.
    const viaFile = await open({ logReaderFor: fileLogReaderFor });
    const viaClient = await open({ recentLog: { perSession: 0, total: 0 } });
    for (const after of [0, 10, 49, 50]) {
      const expected = await stored('s', after);
      expect(shape(await viaFile.readLog('s', after))).toEqual(expected);
      expect(shape(await viaClient.readLog('s', after))).toEqual(expected);
    }
    expect(shape(await viaFile.readLog('s', 10, 5))).toEqual((await stored('s', 10)).slice(0, 5));
  });

  it('has no file reader for a libSQL server or an in-memory database', () => {
    expect(fileLogReaderFor({ url: 'http://127.0.0.1:1', busyTimeoutMs: 10 })).toBeUndefined();
    expect(fileLogReaderFor({ url: 'libsql://example.turso.io', busyTimeoutMs: 10 })).toBeUndefined();
    expect(fileLogReaderFor({ url: ':memory:', busyTimeoutMs: 10 })).toBeUndefined();
    expect(fileLogReaderFor({ url: 'file::memory:', busyTimeoutMs: 10 })).toBeUndefined();
  });
});
