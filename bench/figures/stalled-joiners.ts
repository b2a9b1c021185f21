// Figure 11 (`stalled`): what a joiner that never reads costs the router. `JOINERS` observers
// join and stop reading their sockets, (a) while the session floods live to a controller that
// keeps up (docs/protocol.md §6.4: Output is dropped for a connection past 16 MiB queued), and
// (b) asking for the whole log (`replay_from: 0`) of that flood once it is over (§6.2). Each is
// held past the 5 s a replay waits for a client that takes nothing, then the router's heap and
// buffers after a full collection (bench/lib/held-memory.ts) are read with the joiners there and
// again once they closed: the difference, per joiner, is what they held.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { BenchClient } from '../lib/client.ts';
import { heldBytes, heldMemoryNodeArgs } from '../lib/held-memory.ts';
import { startBenchServer, type BenchServer } from '../lib/server.ts';

const JOINERS = 8;
/** Output of the flood: well past the 16 MiB a connection may have queued before Output is dropped for it. */
const FLOOD_BYTES = 48e6;

export interface HeldByJoiners {
  joiners: number;
  /** Router heap + buffers with the joiners there, and after they closed. */
  during: number;
  after: number;
  perJoiner: number;
  /** The router's resident size with them there, and after. */
  rss: { during: number; after: number };
}

export interface StalledJoiners {
  live: HeldByJoiners;
  replay: HeldByJoiners;
  floodBytes: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A joiner that sends its join and never reads again. */
async function stalledJoiner(server: BenchServer, sessionId: string, extra: Record<string, unknown>): Promise<WebSocket> {
  const ws = new WebSocket(server.attachUrl(sessionId), ['pty-ws.v1'], { headers: { authorization: `Bearer ${server.token}` }, perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ op: 'pty.join_session', id: 'stalled', ts: new Date().toISOString(), payload: { role: 'observer' }, ...extra }));
  (ws as unknown as { _socket: Socket })._socket.pause();
  return ws;
}

async function held(server: BenchServer, dir: string, joiners: WebSocket[]): Promise<HeldByJoiners> {
  const during = await heldBytes(server, dir);
  const rssDuring = server.rss().router;
  for (const j of joiners) j.terminate();
  await sleep(1000);
  const after = await heldBytes(server, dir);
  return { joiners: joiners.length, during, after, perJoiner: (during - after) / joiners.length, rss: { during: rssDuring, after: server.rss().router } };
}

export async function stalledJoiners(env: Record<string, string>): Promise<StalledJoiners> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-bench-heap-'));
  const server = await startBenchServer({ ...env, PTY_WS_REPLAY_BUFFER_FRAMES: '100000' }, heldMemoryNodeArgs(dir));
  try {
    const go = join(server.dir, 'go');
    const argv = ['/bin/sh', '-c', `stty raw -echo; while [ ! -e ${go} ]; do sleep 0.1; done; head -c ${(FLOOD_BYTES / 4) * 3} /dev/urandom | base64 -w 0; exec sleep 3600`];
    const id = await server.createSession({ argv });
    const ctl = await BenchClient.connect(server.attachUrl(id), server.token, true);
    ctl.hashing = false;
    await ctl.join('controller');
    const live: WebSocket[] = [];
    for (let i = 0; i < JOINERS; i++) live.push(await stalledJoiner(server, id, {}));
    writeFileSync(go, '');
    const deadline = Date.now() + 180_000;
    while (ctl.bytes < FLOOD_BYTES && Date.now() < deadline) await sleep(100);
    if (ctl.bytes < FLOOD_BYTES) throw new Error(`the flood reached its controller only ${ctl.bytes} of ${FLOOD_BYTES} bytes in 180 s`);
    await sleep(6000);
    const liveHeld = await held(server, dir, live);
    const replay: WebSocket[] = [];
    for (let i = 0; i < JOINERS; i++) replay.push(await stalledJoiner(server, id, { replay_from: 0 }));
    await sleep(8000);
    const replayHeld = await held(server, dir, replay);
    ctl.close();
    return { live: liveHeld, replay: replayHeld, floodBytes: FLOOD_BYTES };
  } finally {
    await server.stop();
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
}
