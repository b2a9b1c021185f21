// The chaos test of DECISIONS §18 (docs/operations.md, "Faults"): while a native and a tmux session
// print numbered lines and observers reconnect with replay_from, the router is SIGKILLed, the PTY
// host is SIGKILLed, both, and the router is stopped and continued. After each fault: no number
// reused, replay equal to what was seen live, every gap a declared one, the numbered lines
// complete, the server healthy.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runCli, until, type Child } from '../helpers/processes.ts';
import { expectNoneLeft, killMultiplexers } from '../helpers/leftovers.ts';
import { LogWatcher } from '../helpers/log-watcher.ts';
import { Rest } from '../helpers/rest.ts';

const dir = mkdtempSync(join(tmpdir(), 'pty-ws-chaos-'));
const state = join(dir, 'state');
const socket = join(state, 'pty-host.sock');
/** The declared-loss test's own state: its host is found by this socket. */
const lossState = join(dir, 'loss');
const routers: Child[] = [];
const watchers: LogWatcher[] = [];

afterAll(async () => {
  for (const w of watchers) w.close();
  for (const r of routers) await r.stop();
  for (const sock of [socket, join(lossState, 'pty-host.sock')]) {
    const host = hostPid(sock);
    if (host) process.kill(host, 'SIGKILL');
    await killMultiplexers(sock);
  }
  await expectNoneLeft(dir);
  if (process.env.CHAOS_KEEP) for (const [i, r] of routers.entries()) writeFileSync(join(process.env.CHAOS_KEEP, `router-${i}.log`), r.stdout() + r.stderr());
  rmSync(dir, { recursive: true, force: true });
});

/** The PTY host serving this test's state directory (the router starts it; it outlives the router). */
function hostPid(sock = socket): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${entry}/cmdline`, 'latin1');
    } catch {
      continue;
    }
    if (cmd.includes('pty-host') && cmd.includes(sock)) return Number(entry);
  }
  return undefined;
}

interface Served {
  child: Child;
  rest: Rest;
  token: string;
  ws: string;
}

async function startRouter(port: number, stateDir = state): Promise<Served> {
  const child = runCli(['serve', '--port', String(port), '--state-dir', stateDir], { HOME: dir, PTY_WS_REPLAY_BUFFER_FRAMES: '1000000', PTY_WS_LOG_LEVEL: 'info' });
  routers.push(child);
  const origin = await until(() => /listening on (http:\/\/\S+)/.exec(child.stdout())?.[1] ?? (child.proc.exitCode !== null ? 'exited' : undefined), 'the router banner', 60_000);
  if (origin === 'exited') throw new Error(`router exited: ${child.stderr()}`);
  const token = await until(() => /dev token:\s+(\S+)/.exec(child.stdout())?.[1], 'the dev token');
  return { child, rest: new Rest(origin, token), token, ws: origin.replace(/^http/, 'ws') };
}

async function sigkill(child: Child): Promise<void> {
  child.proc.kill('SIGKILL');
  await child.exited;
}

const url = (s: Served, id: string): string => `${s.ws}/agents/local/sessions/${id}/attach`;

/** A loop printing `<tag>-1`, `<tag>-2`, ... as fast as a shell with a short sleep can. */
const printer = (tag: string): string => `i=0; while :; do i=$((i+1)); echo "${tag}-$i"; sleep 0.02; done`;

/** The numbers of `<tag>-N` lines in the text, in order. */
function numbers(text: string, tag: string): number[] {
  return [...text.matchAll(new RegExp(`(?:^|\\n)${tag}-(\\d+)(?=\\r?\\n)`, 'g'))].map((m) => Number(m[1]));
}

/**
 * The numbers of `<tag>-N` lines tmux drew, in order, once each: tmux repaints its client's screen
 * (a line then arrives by cursor position, not after a newline), and a repaint draws lines again.
 */
function drawn(text: string, tag: string): number[] {
  const seen = [...text.matchAll(new RegExp(`${tag}-(\\d+)(?=[\\r\\n\\x1b])`, 'g'))].map((m) => Number(m[1]));
  return [...new Set(seen)].sort((a, b) => a - b);
}

/** Runs of numbers that are not consecutive: [after, before]. */
function breaks(ns: number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 1; i < ns.length; i++) if (ns[i] !== ns[i - 1]! + 1) out.push([ns[i - 1]!, ns[i]!]);
  return out;
}

/** After a fault: every watcher of a session still running is back, caught up, and consistent with a fresh full replay. */
async function check(s: Served, round: string): Promise<void> {
  expect((await fetch(`${s.rest.origin}/readyz`)).status, `${round}: readyz`).toBe(200);
  for (const w of watchers) {
    const rec = (await s.rest.get(w.sessionId)) as { state: string; current_sequence: number; skipped_sequences?: number };
    if (!w.connected && w.closed === null) await w.connect(url(s, w.sessionId), s.token);
    await w.reach(rec.current_sequence);
    expect(w.conflicts, `${round}: numbers reused`).toEqual([]);
    // Every number no frame carried is a declared one.
    const fresh = (await s.rest.get(w.sessionId)) as { skipped_sequences?: number };
    expect(w.gaps().length, `${round}: ${w.name} gaps ${w.gaps().slice(0, 10).join(',')}`).toBe(fresh.skipped_sequences);
    // A full replay gives exactly what was seen live.
    const verifier = new LogWatcher(w.sessionId, `${w.name}-replay`, true);
    await verifier.connect(url(s, w.sessionId), s.token);
    await verifier.reach(w.last);
    verifier.close();
    const differing = [...w.seen].filter(([seq, content]) => verifier.seen.has(seq) && verifier.seen.get(seq) !== content).map(([seq]) => seq);
    expect(differing, `${round}: ${w.name} replay differs`).toEqual([]);
    const missing = [...w.seen.keys()].filter((seq) => !verifier.seen.has(seq));
    expect(missing, `${round}: ${w.name} frames seen live, missing from the replay`).toEqual([]);
  }
}

describe('chaos: faults while sessions print (DECISIONS §18)', () => {
  it('never reuses a number, replays what was seen, loses no line across router faults', async () => {
    const port = await freePort();
    let s = await startRouter(port);
    const native = await s.rest.create({ command: printer('nat'), label: 'native' });
    const tmux = await s.rest.create({ command: printer('mux'), session_backend: 'tmux', label: 'tmux' });
    const nat = new LogWatcher(native.session_id, 'native');
    const mux = new LogWatcher(tmux.session_id, 'tmux');
    watchers.push(nat, mux);
    await nat.connect(url(s, native.session_id), s.token);
    await mux.connect(url(s, tmux.session_id), s.token);
    await nat.reach(20);
    await mux.reach(20);

    const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // 1. The router is killed while both print; a new one starts on the same state.
    for (let i = 0; i < 2; i++) {
      await settle(300 + i * 170);
      for (const w of watchers) w.absorb();
      await sigkill(s.child);
      await settle(800);
      s = await startRouter(port);
      await check(s, `router SIGKILL ${i + 1}`);
    }

    // 2. The router stops (SIGSTOP) past its clients' patience, then goes on.
    s.child.proc.kill('SIGSTOP');
    await settle(2500);
    s.child.proc.kill('SIGCONT');
    await settle(500);
    await check(s, 'router SIGSTOP/SIGCONT');

    const natLines = numbers(nat.text(), 'nat');
    const muxLines = drawn(mux.text(), 'mux');
    expect(natLines.length).toBeGreaterThan(40);
    expect(breaks(natLines), 'native lines lost across router faults').toEqual([]);
    expect(breaks(muxLines), 'tmux lines lost across router faults').toEqual([]);

    // 3. The PTY host is killed: the router starts another; the native session ends (error), tmux lives on.
    const host = hostPid();
    expect(host).toBeDefined();
    process.kill(host!, 'SIGKILL');
    await until(() => nat.absorb() === undefined && nat.closed !== null, 'the native session to close', 30_000);
    expect(nat.closed!.payload).toMatchObject({ kind: 'Closed', reason: 'error' });
    await until(async () => ((await s.rest.get(tmux.session_id)) as { pty_host?: string }).pty_host === undefined && hostPid() !== undefined && hostPid() !== host, 'a new PTY host', 30_000);
    const afterHost = mux.last;
    await settle(500);
    await check(s, 'PTY host SIGKILL');
    expect(mux.last).toBeGreaterThan(afterHost);

    // 4. Both die at once; a new native session prints through it.
    const native2 = await s.rest.create({ command: printer('two'), label: 'native-2' });
    const two = new LogWatcher(native2.session_id, 'native-2');
    watchers.push(two);
    await two.connect(url(s, native2.session_id), s.token);
    await two.reach(20);
    const host2 = hostPid()!;
    await sigkill(s.child);
    process.kill(host2, 'SIGKILL');
    await settle(500);
    s = await startRouter(port);
    await check(s, 'router and PTY host SIGKILL');
    expect(two.closed?.payload).toMatchObject({ kind: 'Closed', reason: 'error' });
    expect(((await s.rest.get(tmux.session_id)) as { state: string }).state).toBe('running');

    // 5. And the router once more, with only tmux printing.
    const before = mux.last;
    await sigkill(s.child);
    await settle(600);
    s = await startRouter(port);
    await check(s, 'router SIGKILL 3');
    expect(mux.last).toBeGreaterThan(before);
    expect(s.child.stdout() + s.child.stderr()).not.toMatch(/sequence numbers skipped/);
    expect(await s.rest.delete(tmux.session_id)).toBe(202);
  }, 240_000);

  it('a loss it cannot rule out (the journal gone, as after a power loss) is declared: the hole skipped, a Keyframe above it, the count in the record and the log; a clean stop skips none', async () => {
    const port = await freePort();
    let s = await startRouter(port, lossState);
    // tmux: the session outlives an orderly stop of the router (and of a host that runs only native ones).
    const session = await s.rest.create({ command: printer('loss'), session_backend: 'tmux' });
    const w = new LogWatcher(session.session_id, 'loss');
    watchers.push(w);
    await w.connect(url(s, session.session_id), s.token);
    await w.reach(30);

    // A clean stop first: nothing skipped, the numbers go on.
    await s.child.stop();
    s = await startRouter(port, lossState);
    await w.connect(url(s, session.session_id), s.token);
    await w.reach(w.last + 5);
    expect(await s.rest.get(session.session_id)).toMatchObject({ state: 'running', skipped_sequences: 0 });
    expect(w.closed).toBeNull();
    expect(w.gaps()).toEqual([]);

    // Killed, and its journal lost with the page cache: what it sent and did not commit is gone.
    await new Promise((r) => setTimeout(r, 300));
    w.absorb();
    const seenBefore = w.last;
    await sigkill(s.child);
    for (const f of readdirSync(lossState).filter((f) => f.startsWith('log-journal.'))) rmSync(join(lossState, f));
    s = await startRouter(port, lossState);
    const rec = (await s.rest.get(session.session_id)) as { skipped_sequences: number };
    expect(rec.skipped_sequences).toBeGreaterThan(0);
    expect(s.child.stdout() + s.child.stderr()).toMatch(/sequence numbers skipped/);

    await w.connect(url(s, session.session_id), s.token);
    await w.reach(w.last + 5);
    expect(w.conflicts).toEqual([]);
    // The declared hole ends right below the Keyframe; every number this client missed is in it.
    // (A frame it saw live from the killed router may be in it too: received, then lost, and said so.)
    const gaps = w.gaps();
    const keyframe = gaps.at(-1)! + 1;
    expect(w.keyframes.has(keyframe)).toBe(true);
    const hole = { first: keyframe - rec.skipped_sequences, last: keyframe - 1 };
    expect(gaps.every((n) => n >= hole.first && n <= hole.last)).toBe(true);
    expect(hole.first).toBeLessThanOrEqual(seenBefore + 1);

    // A replay across the hole: the retained frames, then the Keyframe, then on.
    const replay = new LogWatcher(session.session_id, 'loss-replay', true);
    watchers.push(replay);
    await replay.connect(url(s, session.session_id), s.token);
    await replay.reach(w.last);
    expect([...replay.seen.keys()].filter((n) => n >= hole.first && n <= hole.last)).toEqual([]);
    expect(replay.keyframes.has(keyframe)).toBe(true);
    expect(Math.max(...[...replay.seen.keys()].filter((n) => n < hole.first))).toBe(hole.first - 1);
    for (const [n, content] of replay.seen) if (w.seen.has(n)) expect(content).toBe(w.seen.get(n));
    expect(await s.rest.delete(session.session_id)).toBe(202);
  }, 120_000);
});
