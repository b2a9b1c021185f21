// Figure 10 (BENCH_ONLY=isolation): what one session flooding at full speed costs another
// session's keystroke echo. Session B (ECHO_ARGV, one binary controller) is measured alone and
// then while session A prints base64 of /dev/urandom as fast as the pipeline takes it to one
// binary client reading it in a child process (bench/lib/drain.ts: the bench's own event loop only
// times B, as a reader on another machine would leave it), in interleaved rounds (alone, flooded,
// alone, …) so machine load falls on both alike; the samples of each condition are pooled. Each
// flood is a fresh session A, bounded in bytes (FLOOD_BYTES) and time (FLOOD_SECONDS), deleted at
// the end of its round.
import { BenchClient } from '../lib/client.ts';
import { startDrain, type Drain } from '../lib/drain.ts';
import type { BenchServer } from '../lib/server.ts';
import { ECHO_ARGV, echoLoop, summarize, whenReady, within, type Latency } from './latency.ts';

const FLOOD_BYTES = 400e6;
const FLOOD_SECONDS = 60;

export interface Isolation {
  alone: Latency;
  flooded: Latency;
  /** MB/s session A's client received while B's flooded samples were taken (median of the rounds). */
  floodMBps: number;
}

async function flood(server: BenchServer): Promise<{ id: string; reader: Drain }> {
  const argv = ['/bin/sh', '-c', `stty raw -echo; head -c ${FLOOD_BYTES} /dev/urandom | timeout --foreground ${FLOOD_SECONDS} base64; exec sleep ${FLOOD_SECONDS}`];
  const id = await server.createSession({ argv });
  try {
    // B's flooded samples start once A's bytes flow to its reader.
    return { id, reader: await startDrain(server.attachUrl(id), server.token) };
  } catch (e) {
    await server.deleteSession(id);
    throw e;
  }
}

export async function isolation(server: BenchServer, rounds: number, samples: number, warmup: number): Promise<Isolation> {
  const b = await server.createSession({ argv: ECHO_ARGV });
  const c = await BenchClient.connect(server.attachUrl(b), server.token, true);
  const alone: number[] = [];
  const flooded: number[] = [];
  const rates: number[] = [];
  try {
    const ready = whenReady(c);
    await c.join('controller');
    await within(ready, 10_000, 'session B');
    for (let r = 0; r < rounds; r++) {
      alone.push(...(await echoLoop(c, [c], samples, warmup, true)).map((t) => t[0]!));
      const a = await flood(server);
      try {
        const before = { bytes: a.reader.bytes(), at: performance.now() };
        flooded.push(...(await echoLoop(c, [c], samples, warmup, true)).map((t) => t[0]!));
        // A flood that ended before B's samples did would measure B half alone.
        if (a.reader.bytes() >= FLOOD_BYTES * (4 / 3) * 0.99 || a.reader.idleMs() > 1000) throw new Error("the flood ended before session B's samples did: raise FLOOD_BYTES / FLOOD_SECONDS");
        rates.push((a.reader.bytes() - before.bytes) / 1e6 / ((performance.now() - before.at) / 1000));
      } finally {
        await a.reader.stop();
        await server.deleteSession(a.id);
        // The next alone round starts once A is over, not while its last output is still handled.
        const deadline = Date.now() + 10_000;
        while ((await server.getSession(a.id)).state !== 'closed' && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
      }
    }
  } finally {
    c.close();
    await server.deleteSession(b);
  }
  rates.sort((x, y) => x - y);
  return { alone: summarize(alone), flooded: summarize(flooded), floodMBps: rates[Math.floor(rates.length / 2)]! };
}
