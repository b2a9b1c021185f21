// Replay across a crash: the router is SIGKILLed while a client is attached and a process keeps
// printing, then restarted on the same database: a file, or a libSQL server over http://.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { createClient, type Client } from '@libsql/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.ts';
import { cursorOf, join, logFramesOf, maxLoggedSequence, readLogRows } from '../helpers/log-rows.ts';
import { startPtyHostProcess, startRouterProcess, until, type Child } from '../helpers/processes.ts';
import { startSqld } from '../helpers/sqld.ts';

interface Database {
  /** Settings that point the router at it. */
  env: Record<string, string>;
  /** A second connection, to read what was committed. */
  client(): Client;
  stop(): Promise<void>;
}

const databases: Array<{ name: string; open(dir: string): Promise<Database> }> = [
  {
    name: 'a file database',
    open: async (dir) => ({ env: {}, client: () => createClient({ url: `file:${joinPath(dir, 'state', 'pty-ws.db')}` }), stop: async () => undefined }),
  },
  {
    name: 'a libSQL server over http:// with a JWT',
    open: async (dir) => {
      const sqld = await startSqld(dir);
      return {
        env: { PTY_WS_DATABASE_URL: sqld.httpUrl, PTY_WS_DATABASE_AUTH_TOKEN: sqld.authToken },
        client: () => createClient({ url: sqld.httpUrl, authToken: sqld.authToken }),
        stop: () => sqld.stop(),
      };
    },
  },
];

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const TICKER = 'i=0; while :; do i=$((i+1)); echo tick-$i; sleep 0.02; done';

let dir: string;
const cleanups: Array<() => unknown> = [];

beforeEach(() => {
  dir = mkdtempSync(joinPath(tmpdir(), 'pty-ws-restart-'));
  mkdirSync(joinPath(dir, 'state'));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function track<T extends Child>(child: T): T {
  cleanups.push(() => child.stop());
  return child;
}

describe.each(databases)('after a SIGKILL of the router, on $name', ({ open }) => {
  it('replays every durable frame with its sequence, then a Keyframe, and numbers on without reuse', { timeout: 60_000 }, async () => {
    const db = await open(dir);
    cleanups.push(() => db.stop());
    const socket = joinPath(dir, 'pty.sock');
    track(await startPtyHostProcess(socket, { HOME: dir }));
    const flags = { 'state-dir': joinPath(dir, 'state'), 'pty-socket': socket };
    const env = { HOME: dir, ...db.env };

    const first = track(await startRouterProcess(flags, env));
    const { session_id: id } = await first.createSession({ command: TICKER });
    const a = await TestClient.connect(first.attachUrl(id), { token: first.token });
    const aJoin = await join(a, { role: 'controller' }, { replay_from: 0 });
    const b = await TestClient.connect(first.attachUrl(id), { token: first.token });
    const bJoin = await join(b, { role: 'observer' }, { replay_from: 0 });
    await b.waitForOutput('tick-10');
    b.close();
    await b.waitForClose();
    const bCursor = cursorOf(b, [bJoin]);

    // a stays attached and the ticker keeps printing while more frames become durable.
    const reader = db.client();
    cleanups.push(() => reader.close());
    await until(async () => (await maxLoggedSequence(reader, id)) >= bCursor + 20, 'frames after b left to be durable');
    first.proc.kill('SIGKILL');
    await first.exited;
    await a.waitForClose();

    const before = await readLogRows(reader, id);
    const durable = before.at(-1)!.sequence;
    expect(before.map((r) => r.sequence)).toEqual(range(1, durable));
    // What was logged is exactly what a got live. a may also hold a few newer frames that were
    // not committed yet when the router died (at most the durability delay's worth).
    const aLive = new Map(logFramesOf(a, [aJoin]).map((f) => [f.sequence, f]));
    for (const row of before) expect(aLive.get(row.sequence)).toEqual(row.frame);
    expect(cursorOf(a, [aJoin])).toBeGreaterThanOrEqual(durable);

    const second = track(await startRouterProcess(flags, env));
    const b2 = await TestClient.connect(second.attachUrl(id), { token: second.token });
    const b2Join = await join(b2, { role: 'observer' }, { replay_from: bCursor });
    const all = b2.frames();
    const flush = all.slice(all.findIndex((f) => f.op === 'pty.session_frame'), all.findIndex((f) => f.id === b2Join && f.payload.kind === 'Keyframe') + 1);
    expect(flush[0]).toMatchObject({ id: b2Join, payload: { kind: 'RoleAssigned' } });
    const keyframe = flush.at(-1)!;
    const replayed = flush.slice(1, -1);

    // Every frame b missed that was durable, as it was logged, with its sequence...
    expect(replayed.filter((f) => f.sequence <= durable)).toEqual(before.filter((r) => r.sequence > bCursor).map((r) => r.frame));
    // ...then the frames of the new run, numbered on from the last durable one: no gap, no reuse...
    expect(replayed.map((f) => f.sequence)).toEqual(range(bCursor + 1, keyframe.sequence));
    expect(replayed.at(-1)).toMatchObject({ sequence: keyframe.sequence, payload: { kind: 'MembershipChanged' } });
    expect(keyframe.sequence).toBeGreaterThan(durable);
    // ...then a Keyframe (its content is the PTY host re-adoption's business, not checked here).
    expect(keyframe.payload).toMatchObject({ kind: 'Keyframe', snapshot_format: expect.any(String) });

    // The process kept printing through the restart: its new output continues the counter, and
    // the log takes every new frame (a reused sequence would collide with a logged one).
    const live = await b2.waitForFrame((f) => f.payload.kind === 'Output' && f.sequence > keyframe.sequence, 'output after the restart');
    await until(async () => (await maxLoggedSequence(reader, id)) >= live.sequence, 'the new output to be durable');
    const after = await readLogRows(reader, id);
    expect(after.map((r) => r.sequence)).toEqual(range(1, after.at(-1)!.sequence));
    expect(after.slice(0, durable)).toEqual(before);
    const b2Frames = new Map(logFramesOf(b2, [b2Join]).map((f) => [f.sequence, f]));
    for (const row of after.filter((r) => r.sequence > durable && r.sequence <= live.sequence)) expect(row.frame).toEqual(b2Frames.get(row.sequence));
    b2.close();
  });
});
