// Joiners that ask for the whole log (`replay_from: 0`) and never read, against the real router
// process, PTY host and libSQL file (docs/protocol.md §6.2, docs/security.md 8): each holds about
// the slow-client low mark of the router's memory, not the pages it read nor the log, and that is
// let go of once they close. A stalled joiner that reads again is told PTY_OUTPUT_LAGGED before its
// Keyframe and never gets a frame twice.
//
// What the router holds is read after a full collection (a heap snapshot, which starts with one,
// on SIGUSR2): the resident size of an idle Node process moves by tens of MiB with when V8 last
// collected, and the sends a replay makes leave garbage until it does.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { floodedSession, type Frame, rssOf } from '../helpers/flooded-session.ts';
import { startRouterProcess, until, type RouterProcess } from '../helpers/processes.ts';

/** The session's output (test/helpers/flooded-session.ts). */
const OUTPUT_BYTES = 24_000_000;
const JOINERS = 12;
/** What a joiner that never reads may hold of the router's memory (the performance target). */
const PER_JOINER = 2 * 1024 * 1024;

let dir: string;
let router: RouterProcess;
let sessionId: string;


let snapshots = 0;
const diagnostics = () => join(dir, 'diagnostics');

/** The router's heap in use plus its buffers outside the heap, after a full collection. */
async function heldBytes(): Promise<number> {
  router.proc.kill('SIGUSR2');
  snapshots++;
  await until(() => readdirSync(diagnostics()).length >= snapshots || undefined, 'the heap snapshot', 30_000);
  // A kept-alive connection may have timed out while the snapshot held the router: asked again.
  const metrics = await until(() => fetch(`${router.origin}/metrics`, { headers: { authorization: `Bearer ${router.token}` } }).then((r) => r.text(), () => undefined), 'the metrics');
  const gauge = (name: string) => Number(new RegExp(`^pty_ws_${name} (\\S+)`, 'm').exec(metrics)![1]);
  for (const f of readdirSync(diagnostics())) rmSync(join(diagnostics(), f), { force: true });
  snapshots = 0;
  return gauge('nodejs_heap_size_used_bytes') + gauge('nodejs_external_memory_bytes');
}

const rss = () => rssOf(router.proc.pid!);
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function open(): Promise<WebSocket> {
  const ws = new WebSocket(router.attachUrl(sessionId), ['pty-ws.v1'], { headers: { authorization: `Bearer ${router.token}` }, perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return ws;
}

/** A joiner asking for everything; its socket is not read from then on. */
async function stalledJoiner(id: string): Promise<{ ws: WebSocket; socket: Socket }> {
  const ws = await open();
  const socket = (ws as unknown as { _socket: Socket })._socket;
  ws.send(JSON.stringify({ op: 'pty.join_session', id, ts: new Date().toISOString(), replay_from: 0, payload: { role: 'observer' } }));
  socket.pause();
  return { ws, socket };
}

/** Highest RSS seen over `ms`. */
async function peakOver(ms: number): Promise<number> {
  let peak = 0;
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) peak = Math.max(peak, rss());
  return peak;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-stalled-joiners-'));
  mkdirSync(diagnostics());
  router = await startRouterProcess(
    { 'state-dir': join(dir, 'state') },
    { HOME: dir, PTY_WS_REPLAY_BUFFER_FRAMES: '100000', NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${diagnostics()}` },
  );
  sessionId = await floodedSession(router, OUTPUT_BYTES, 100_000);
  // What the output's flood left behind settles first.
  await sleep(2000);
}, 120_000);

afterAll(async () => {
  await router?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('joiners that ask for the whole log and never read', { timeout: 90_000 }, () => {
  it('hold at most 2 MiB of the router each, and nothing once closed', async () => {
    const before = await heldBytes();
    const rssBefore = rss();
    const joiners = [];
    for (let i = 0; i < JOINERS; i++) joiners.push(await stalledJoiner(`stalled-${i}`));
    // Past the 5 s a replay waits for a client that takes nothing.
    const peak = await peakOver(8000);
    const during = await heldBytes();
    for (const j of joiners) j.ws.terminate();
    await sleep(1000);
    const after = await heldBytes();
    const report = `router heap + buffers ${mib(before)} → ${mib(during)} with ${JOINERS} stalled joiners → ${mib(after)} after they closed; RSS ${mib(rssBefore)} → peak ${mib(peak)}`;
    expect(during - before, report).toBeLessThan(JOINERS * PER_JOINER);
    expect(after - before, report).toBeLessThan(JOINERS * 64 * 1024);
  });

  it('tells one that reads again PTY_OUTPUT_LAGGED right before its Keyframe, once, and repeats no frame', async () => {
    const { ws, socket } = await stalledJoiner('late-reader');
    const frames: Frame[] = [];
    ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString()) as Frame));
    await sleep(7000);
    socket.resume();
    await until(() => frames.find((f) => f.id === 'late-reader' && f.payload.kind === 'Keyframe'), 'the join Keyframe', 30_000);
    // Nothing was dropped after the Keyframe (the session prints nothing more): no second repaint.
    await sleep(1000);
    const keyframeAt = frames.findIndex((f) => f.id === 'late-reader' && f.payload.kind === 'Keyframe');
    const logged = frames.slice(0, keyframeAt).filter((f) => f.op === 'pty.session_frame' && f.payload.kind !== 'RoleAssigned' && f.payload.kind !== 'Error');
    const sequences = logged.map((f) => f.sequence);
    expect(sequences[0]).toBe(1);
    expect(sequences.every((s, i) => i === 0 || s > sequences[i - 1]!)).toBe(true);
    // Cut short: the rest of the log was not read for it, and it is told so right before the Keyframe.
    expect(logged.filter((f) => f.payload.kind === 'Output').length).toBeLessThan(sequences.at(-1)! / 2);
    expect(frames[keyframeAt - 1]!.payload.code).toBe('PTY_OUTPUT_LAGGED');
    expect(frames.filter((f) => f.payload.code === 'PTY_OUTPUT_LAGGED')).toHaveLength(1);
    ws.close();
  });
});
