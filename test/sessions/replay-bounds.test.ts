// A replay of a large log (docs/protocol.md §6.2, docs/security.md 8) against the real router
// process, PTY host and libSQL file: read and sent a page at a time. A client that reads gets every
// frame in order, then the Keyframe; one that asks for everything and stops reading costs the
// router at most the slow-client mark, not the log (it gets PTY_OUTPUT_LAGGED and a Keyframe once
// it reads again); replay_max_bytes gets the newest frames that fit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPLAY_PAGE_FRAMES } from '../../src/hub/session-log.ts';
import { currentSequence as sequenceOf, floodedSession, type Frame, rssOf } from '../helpers/flooded-session.ts';
import { startRouterProcess, until, type RouterProcess } from '../helpers/processes.ts';

/** Output of the session: base64 of random bytes, in frames of up to 64 KiB. */
const OUTPUT_BYTES = 80_000_000;

let dir: string;
let router: RouterProcess;
let sessionId: string;


/** A JSON client on the session: every frame it got, parsed, and the Output bytes counted. */
class Reader {
  frames: Frame[] = [];
  outputBytes = 0;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, binary: boolean) => {
      if (binary) {
        this.outputBytes += data.length - 13;
        return;
      }
      const f = JSON.parse(data.toString()) as Frame;
      if (f.payload.kind === 'Output') {
        this.outputBytes += Buffer.byteLength(f.payload.data!, 'base64');
        f.payload.data = '';
      }
      this.frames.push(f);
    });
  }

  static async open(binary = false): Promise<Reader> {
    const ws = new WebSocket(router.attachUrl(sessionId), [binary ? 'pty-ws.v1.binary' : 'pty-ws.v1'], { headers: { authorization: `Bearer ${router.token}` }, perMessageDeflate: false });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new Reader(ws);
  }

  join(payload: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
    const id = `join-${Math.random().toString(36).slice(2)}`;
    this.ws.send(JSON.stringify({ op: 'pty.join_session', id, ts: new Date().toISOString(), payload, ...extra }));
    return id;
  }

  keyframeOf(id: string): Frame | undefined {
    return this.frames.find((f) => f.id === id && f.payload.kind === 'Keyframe');
  }
}

const currentSequence = () => sequenceOf(router, sessionId);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-replay-bounds-'));
  router = await startRouterProcess({ 'state-dir': join(dir, 'state') }, { HOME: dir, PTY_WS_REPLAY_BUFFER_FRAMES: '100000' });
  sessionId = await floodedSession(router, OUTPUT_BYTES, 170_000);
}, 180_000);

afterAll(async () => {
  router?.proc.kill('SIGTERM');
  await until(() => router?.proc.exitCode !== null || router?.proc.signalCode !== null || undefined, 'the router to stop', 20_000).catch(() => router?.proc.kill('SIGKILL'));
  rmSync(dir, { recursive: true, force: true });
});

describe('a replay of a log much larger than a page', { timeout: 180_000 }, () => {
  it('with replay_max_bytes sends only the newest frames that fit, then the Keyframe', async () => {
    // That it reads a page at a time, as the whole replay does, is test/hub/join.test.ts's: the
    // router's memory cannot tell here (what the flood before left free serves the old whole read).
    const r = await Reader.open();
    const id = r.join({ role: 'observer', replay_max_bytes: 1_000_000 }, { replay_from: 0 });
    await until(() => r.keyframeOf(id), 'the Keyframe after the replay', 60_000);
    const replayed = r.frames.filter((f) => f.op === 'pty.session_frame' && f.payload.kind === 'Output');
    expect(replayed.length).toBeGreaterThan(0);
    expect(r.outputBytes).toBeLessThanOrEqual(750_000);
    r.ws.close();
  });

  it('reaches a client that reads: every frame in order, all the output, then the Keyframe', async () => {
    const upTo = await currentSequence();
    const r = await Reader.open();
    const id = r.join({ role: 'observer' }, { replay_from: 0 });
    await until(() => r.keyframeOf(id), 'the Keyframe after the replay', 120_000);
    // Periodic Keyframes are logged frames and replayed like the rest; the join's own is not.
    const replayed = r.frames.filter((f) => f.op === 'pty.session_frame' && f.payload.kind !== 'RoleAssigned' && f.id !== id && f.sequence <= upTo + 1);
    const sequences = replayed.map((f) => f.sequence);
    // More frames than a page (frames are a turn's output each: up to a few hundred KiB here).
    expect(sequences.length).toBeGreaterThan(REPLAY_PAGE_FRAMES);
    const gaps = sequences.filter((s, i) => i > 0 && s !== sequences[i - 1]! + 1).map((s) => [sequences[sequences.indexOf(s) - 1], s]);
    expect(gaps).toEqual([]);
    expect(sequences[0]).toBe(1);
    expect(r.outputBytes).toBe(OUTPUT_BYTES);
    expect(r.frames.some((f) => f.payload.code === 'PTY_OUTPUT_LAGGED')).toBe(false);
    r.ws.close();
  });

  it('costs the router at most the slow-client mark for a client that asks for everything and stops reading', async () => {
    const before = rssOf(router.proc.pid!);
    const r = await Reader.open();
    const socket = (r.ws as unknown as { _socket: import('node:net').Socket })._socket;
    const id = r.join({ role: 'observer' }, { replay_from: 0 });
    socket.pause();
    // Long enough for the router to have read and queued the whole log, as it did.
    let peak = before;
    for (const end = Date.now() + 6000; Date.now() < end; ) {
      peak = Math.max(peak, rssOf(router.proc.pid!));
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(peak - before, `router RSS ${(before / 2 ** 20).toFixed(0)} → peak ${(peak / 2 ** 20).toFixed(0)} MiB`).toBeLessThan(OUTPUT_BYTES * 0.75);
    // Reading again: what was dropped is named, then the Keyframe repaints; the connection goes on.
    socket.resume();
    await until(() => r.frames.find((f) => f.payload.code === 'PTY_OUTPUT_LAGGED'), 'PTY_OUTPUT_LAGGED', 60_000);
    await until(() => r.keyframeOf(id), 'the join Keyframe', 60_000);
    expect(r.outputBytes).toBeLessThan(OUTPUT_BYTES);
    r.ws.close();
  });

});
