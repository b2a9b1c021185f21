// Figure 4: reconnect with replay_from 1000 frames back → time to the Keyframe; again with 100k
// frames retained. Baseline: a join without replay on the same session.
import { writeFileSync } from 'node:fs';
import { BenchClient } from '../lib/client.ts';
import type { BenchServer } from '../lib/server.ts';
import { spread, type Spread } from '../lib/stats.ts';

/** Prints numbered lines until `stop` exists, then idles: the replay is measured on a quiet session. */
const producer = (stop: string) => ['/bin/sh', '-c', `i=0; while [ ! -e ${stop} ]; do echo "line $i"; i=$((i+1)); done; sleep 3600`];

async function timeToKeyframe(server: BenchServer, id: string, replayFrom: number | null): Promise<{ ms: number; frames: number }> {
  const c = await BenchClient.connect(server.attachUrl(id), server.token, false);
  let frames = 0;
  c.on((f) => {
    if (f && f.op === 'pty.session_frame' && f.payload.kind !== 'RoleAssigned' && f.payload.kind !== 'Keyframe') frames++;
  });
  const t0 = performance.now();
  const joinId = c.send('pty.join_session', { role: 'observer' }, replayFrom === null ? {} : { replay_from: replayFrom });
  await c.waitFor((f) => f.id === joinId && f.payload.kind === 'Keyframe');
  const ms = performance.now() - t0;
  c.close();
  return { ms, frames };
}

export interface ReplayFigures {
  retained: number;
  replayedFrames: number;
  replay1000: Spread;
  joinWithoutReplay: Spread;
}

/** Produces output until `retained` frames are logged, then measures `runs` reconnects. */
export async function replay(server: BenchServer, retained: number, runs: number): Promise<ReplayFigures> {
  const stop = `${server.dir}/stop-${retained}`;
  const id = await server.createSession({ argv: producer(stop) });
  const ctl = await BenchClient.connect(server.attachUrl(id), server.token, true);
  await ctl.join('controller');
  const deadline = Date.now() + 120_000;
  let seq = 0;
  while (seq < retained + 1000 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    seq = Number((await server.getSession(id)).current_sequence);
  }
  writeFileSync(stop, '');
  await new Promise((r) => setTimeout(r, 1000));
  seq = Number((await server.getSession(id)).current_sequence);
  const withReplay: number[] = [];
  const plain: number[] = [];
  let replayedFrames = 0;
  for (let i = 0; i < runs; i++) {
    const r = await timeToKeyframe(server, id, seq - 1000);
    withReplay.push(r.ms);
    replayedFrames = r.frames;
    plain.push((await timeToKeyframe(server, id, null)).ms);
  }
  ctl.close();
  return { retained: seq, replayedFrames, replay1000: spread(withReplay), joinWithoutReplay: spread(plain) };
}
