// Figure 2t (BENCH_ONLY=trace, not in the default run): where a keystroke's echo spends its time
// inside pty-ws. The router and PTY host run with PTY_HOP_TRACE_DIR (src/adapter/node/hop-trace.ts),
// each writing the time it reaches each hop; one binary client sends keys one at a time, and
// every sample's hops are chained in order (each the first of its kind after the one before).
// The trace costs a buffered line per hop, so the total is a little above figure 2's.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchClient } from '../lib/client.ts';
import { startBenchServer } from '../lib/server.ts';
import { ECHO_ARGV, summarize, whenReady, within, type Latency } from './latency.ts';

/** The hops in path order; `type`: the PTY-host frame type the event must carry. */
const HOPS: Array<{ hop: string; type?: string }> = [
  { hop: 'router.ws_in' },
  { hop: 'router.to_host', type: 'write' },
  { hop: 'host.in', type: 'write' },
  { hop: 'host.pty_write' },
  { hop: 'host.pty_read' },
  { hop: 'host.out', type: 'data' },
  { hop: 'router.from_host', type: 'data' },
  { hop: 'router.hub_in' },
  { hop: 'router.log_in' },
  { hop: 'router.log_encoded' },
  { hop: 'router.log_out' },
  { hop: 'router.ws_out' },
];

/** What each segment is: the time from the hop before (or the client's send) to this one. */
export const SEGMENTS = [
  'client send → router WS message',
  'router: input frame → write to the host socket',
  'host socket (router → host)',
  'host: request → node-pty write',
  'PTY: write → echo read (kernel, cat, node-pty)',
  'host: PTY read → frame written to the router',
  'host socket (host → router)',
  'router: socket data → hub onData (frame decode; a JSON host: schema parse)',
  'router: hub onData → log append (routing, event numbers)',
  'router: encode the log frame (base64 + JSON)',
  'router: store.appendLog (write-before-send journal)',
  'router: → WS send (delivery, fan-out)',
  'WS send → client has the echo',
] as const;

interface Event {
  hop: string;
  t: number;
  type: string;
}

function readEvents(dir: string): Event[] {
  const events: Event[] = [];
  for (const f of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      const [hop, t, type] = line.split(' ');
      if (hop && t) events.push({ hop, t: Number(t), type: type ?? '' });
    }
  }
  return events.sort((a, b) => a.t - b.t);
}

/** One sample's segment times in ms, or null when a hop is missing between send and receive. */
function segments(events: Event[], sentAt: number, seenAt: number): number[] | null {
  const times = [sentAt];
  let i = events.findIndex((e) => e.t >= sentAt);
  if (i < 0) return null;
  for (const h of HOPS) {
    while (i < events.length && !(events[i]!.hop === h.hop && (!h.type || events[i]!.type === h.type))) i++;
    if (i >= events.length || events[i]!.t > seenAt) return null;
    times.push(events[i]!.t);
  }
  times.push(seenAt);
  return times.slice(1).map((t, k) => t - times[k]!);
}

export interface HopFigure {
  total: Latency;
  segments: Array<{ segment: string } & Latency>;
  /** Samples whose hops could not all be found (they are left out). */
  unmatched: number;
}

export async function hopTrace(env: Record<string, string>, samples: number, warmup: number): Promise<HopFigure> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-hop-trace-'));
  const server = await startBenchServer({ ...env, PTY_HOP_TRACE_DIR: dir });
  const sent: Array<[number, number]> = [];
  try {
    const id = await server.createSession({ argv: ECHO_ARGV });
    const c = await BenchClient.connect(server.attachUrl(id), server.token, true);
    const ready = whenReady(c);
    await c.join('controller');
    await within(ready, 10_000, 'the traced echo session');
    const origin = performance.timeOrigin;
    for (let i = 0; i < samples + warmup; i++) {
      const key = Buffer.from(String.fromCharCode(97 + (i % 26)));
      const seen = new Promise<number>((resolve) => {
        const off = c.on((_f, d) => {
          if (d?.includes(key)) {
            off();
            resolve(origin + performance.now());
          }
        });
      });
      const t0 = origin + performance.now();
      c.sendInput(key, true);
      const t1 = await within(seen, 10_000, `traced echo of sample ${i}`);
      if (i >= warmup) sent.push([t0, t1]);
      // Apart enough that a sample's late events (acknowledgements, log work) are not the next one's.
      await new Promise((r) => setTimeout(r, 2));
    }
    c.close();
    // The processes write their buffered lines every 100 ms.
    await new Promise((r) => setTimeout(r, 400));
  } finally {
    await server.stop();
  }
  const events = readEvents(dir);
  rmSync(dir, { recursive: true, force: true });
  const per = sent.map(([t0, t1]) => segments(events, t0, t1)).filter((s): s is number[] => s !== null);
  return {
    total: summarize(sent.map(([t0, t1]) => t1 - t0)),
    segments: SEGMENTS.map((segment, k) => ({ segment, ...summarize(per.map((s) => s[k]!)) })),
    unmatched: sent.length - per.length,
  };
}
