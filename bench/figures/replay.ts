// Figure 4: reconnect with replay_from 1000 frames back → time to the Keyframe, at each frame size
// the figure produces (REPLAY_FRAME_BYTES, ~3k frames retained), and with ~100k frames retained
// of an interactive pace. Baseline: a join without replay on the same session.
import { writeFileSync } from 'node:fs';
import { BenchClient } from '../lib/client.ts';
import type { BenchServer } from '../lib/server.ts';
import { spread, type Spread } from '../lib/stats.ts';

/** Output bytes per frame of the sized runs: one 80-column line, a burst of lines, a whole PTY read (the line discipline hands over at most 4 KiB). */
export const REPLAY_FRAME_BYTES = [80, 800, 4000];

/**
 * Prints numbered 80-column lines until `stop` exists, then idles, so the replay is measured on a
 * quiet session. `frameBytes` null: a line every ~50 µs (a busy-wait), the pace of an interactive
 * terminal, frames as large as the host's reads make them at the machine's load (~400–900 B).
 * A number: that many bytes in one write, then 2 ms asleep, so each write is read, and logged, as
 * one frame of that size.
 */
const producer = (stop: string, frameBytes: number | null) => [
  process.execPath,
  '-e',
  `const fs = require('fs'); const size = ${JSON.stringify(frameBytes)}; let i = 0;
   const nap = new Int32Array(new SharedArrayBuffer(4));
   const line = () => ('line ' + i++).padEnd(78, '.') + '\\r\\n';
   for (let n = 0; ; n++) {
     if (n % 100 === 0 && fs.existsSync(${JSON.stringify(stop)})) break;
     if (size === null) {
       fs.writeSync(1, line());
       const t = process.hrtime.bigint(); while (process.hrtime.bigint() - t < 50000n);
     } else {
       let s = ''; while (s.length < size) s += line();
       fs.writeSync(1, s.slice(0, size));
       Atomics.wait(nap, 0, 0, 2);
     }
   }
   setInterval(() => {}, 1e9);`,
];

async function timeToKeyframe(server: BenchServer, id: string, replayFrom: number | null): Promise<{ ms: number; frames: number; bytes: number }> {
  const c = await BenchClient.connect(server.attachUrl(id), server.token, false);
  let frames = 0;
  let bytes = 0;
  c.on((f, data) => {
    if (f && f.op === 'pty.session_frame' && f.payload.kind !== 'RoleAssigned' && f.payload.kind !== 'Keyframe') {
      frames++;
      bytes += data?.length ?? 0;
    }
  });
  const t0 = performance.now();
  const joinId = c.send('pty.join_session', { role: 'observer' }, replayFrom === null ? {} : { replay_from: replayFrom });
  await c.waitFor((f) => f.id === joinId && f.payload.kind === 'Keyframe');
  const ms = performance.now() - t0;
  c.close();
  return { ms, frames, bytes };
}

export interface ReplayFigures {
  /** The producer's frame size (null: an interactive pace, frames as the load makes them). */
  producedFrameBytes: number | null;
  retained: number;
  replayedFrames: number;
  /** Mean output bytes per replayed frame. */
  frameBytes: number;
  /** How long producing the retained frames took. */
  productionSeconds: number;
  replay1000: Spread;
  joinWithoutReplay: Spread;
  /** The first replay of the run, before the warm-up: on a router that has not replayed yet (JSON paths not yet compiled). */
  firstReplayMs: number;
}

/** Replays made (each with a join without replay) before the measured ones, like figure 9's warm-up: the first on a fresh router pays for compiling the replay's paths. */
const WARM_UP = 3;

/** Produces output until `retained` frames are logged, then measures `runs` reconnects. */
export async function replay(server: BenchServer, retained: number, runs: number, frameBytes: number | null): Promise<ReplayFigures> {
  const stop = `${server.dir}/stop-${retained}-${frameBytes}`;
  const id = await server.createSession({ argv: producer(stop, frameBytes) });
  const ctl = await BenchClient.connect(server.attachUrl(id), server.token, true);
  await ctl.join('controller');
  const started = Date.now();
  const deadline = started + 180_000;
  let seq = 0;
  while (seq < retained + 1000 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    seq = Number((await server.getSession(id)).current_sequence);
  }
  writeFileSync(stop, '');
  const productionSeconds = (Date.now() - started) / 1000;
  await new Promise((r) => setTimeout(r, 1000));
  seq = Number((await server.getSession(id)).current_sequence);
  const withReplay: number[] = [];
  const plain: number[] = [];
  let replayedFrames = 0;
  let replayedBytes = 0;
  let firstReplayMs = NaN;
  for (let i = 0; i < WARM_UP; i++) {
    const ms = (await timeToKeyframe(server, id, seq - 1000)).ms;
    if (i === 0) firstReplayMs = ms;
    await timeToKeyframe(server, id, null);
  }
  for (let i = 0; i < runs; i++) {
    const r = await timeToKeyframe(server, id, seq - 1000);
    withReplay.push(r.ms);
    replayedFrames = r.frames;
    replayedBytes = r.bytes;
    plain.push((await timeToKeyframe(server, id, null)).ms);
  }
  ctl.close();
  await server.deleteSession(id);
  return { producedFrameBytes: frameBytes, retained: seq, replayedFrames, frameBytes: replayedBytes / Math.max(1, replayedFrames), productionSeconds, replay1000: spread(withReplay), joinWithoutReplay: spread(plain), firstReplayMs };
}

/** Each sized run at ~3k retained, then ~100k retained at an interactive pace. */
export async function replayFigure(server: BenchServer, runs: number): Promise<ReplayFigures[]> {
  const out: ReplayFigures[] = [];
  for (const size of REPLAY_FRAME_BYTES) out.push(await replay(server, 2000, runs, size));
  out.push(await replay(server, 100_000, runs, null));
  return out;
}
