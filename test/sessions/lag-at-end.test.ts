// A member that fell behind (its Output dropped while another kept up, docs/protocol.md §6.4) when
// its session ends: it gets the rest of the log, or PTY_OUTPUT_LAGGED and a Keyframe, never a
// Closed frame after a silent gap. Real router, real PTY, a client whose socket stops reading.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, type Frame } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  // A lower slow-consumer threshold than the product's 16 MiB keeps the output small. No periodic
  // Keyframes: a log frame other than Output reaching the lagged member is a case of its own.
  server = await startTestServer(
    { PTY_WS_KEYFRAME_INTERVAL_FRAMES: '1000000', PTY_WS_KEYFRAME_INTERVAL_SECONDS: '86400' },
    {},
    { overrides: { lag: { highBytes: 4 * 1024 * 1024, lowBytes: 256 * 1024, pollMs: 50 } } },
  );
  token = server.devToken!;
});
afterAll(async () => {
  await server?.stop();
});

const MARK = 'lag-at-end-done';
const FLOOD = 'head -c 6000000 /dev/zero | od -v -An -tx1 | head -c 14000000';
/** About 14 MB of output, then the mark, then the process ends. */
const COMMAND = `sleep 0.5; ${FLOOD}; echo; echo ${MARK}`;

/** Log frames (those not answering the join) in the order received, after the join's Keyframe. */
function logFramesAfterJoin(frames: Frame[], joinId: string): Frame[] {
  const keyframe = frames.findIndex((f) => f.id === joinId && f.payload.kind === 'Keyframe');
  return frames.slice(keyframe + 1).filter((f) => f.op === 'pty.session_frame' && f.payload.kind !== 'Error' && f.id !== joinId);
}

/**
 * A fast binary controller and a JSON observer whose socket stops reading; resolves once the
 * session ended for the fast one. `meanwhile` runs once the fast one has seen `after`.
 */
async function behindAtEnd(command = COMMAND, meanwhile?: { after: string; run: (fast: TestClient) => Promise<void> }): Promise<{ slow: TestClient; joinId: string; resume: () => void }> {
  const { attach_url: url } = await server.createSession({ command });
  const fast = await TestClient.connect(url, { token, protocols: ['pty-ws.v1.binary'] });
  await fast.join({ role: 'controller' });
  const slow = await TestClient.connect(url, { token });
  const joined = await slow.join({ role: 'observer' });
  const joinId = joined.find((f) => f.payload.kind === 'Keyframe')!.id;
  const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  socket.pause();
  if (meanwhile) {
    await fast.waitForOutput(meanwhile.after, 60_000);
    await meanwhile.run(fast);
  }
  await fast.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed on the fast client', 60_000);
  fast.close();
  return { slow, joinId, resume: () => socket.resume() };
}

/** The jumps in the log frames it got, and whether each is owned up to: a PTY_OUTPUT_LAGGED after the frame before it. */
function gapsDeclared(frames: Frame[], joinId: string): { gaps: number; declared: boolean } {
  const log = logFramesAfterJoin(frames, joinId);
  const lagged = frames.findLastIndex((f) => f.payload.kind === 'Error' && f.payload.code === 'PTY_OUTPUT_LAGGED');
  let gaps = 0;
  let declared = true;
  for (let i = 1; i < log.length; i++) {
    if (log[i]!.sequence === log[i - 1]!.sequence + 1) continue;
    gaps++;
    if (lagged < frames.indexOf(log[i - 1]!)) declared = false;
  }
  return { gaps, declared };
}

describe('a member behind when its session ends', () => {
  it('gets the rest of the log once it reads again, up to the Closed frame, with no gap', { timeout: 120_000 }, async () => {
    const { slow, joinId, resume } = await behindAtEnd();
    resume();
    await slow.waitForFrame((f) => f.op === 'binding_goodbye', 'goodbye', 60_000);
    const frames = slow.frames();
    const log = logFramesAfterJoin(frames, joinId);
    const sequences = log.map((f) => f.sequence);
    expect(sequences).toEqual(sequences.map((_, i) => sequences[0]! + i));
    expect(log.at(-1)!.payload.kind).toBe('Closed');
    expect(slow.output()).toContain(MARK);
    expect(frames.some((f) => f.payload.code === 'PTY_OUTPUT_LAGGED')).toBe(false);
    expect((await slow.waitForClose()).code).toBe(1000);
  });

  it('that does not read for the replay stall time gets the Closed frame, PTY_OUTPUT_LAGGED and a Keyframe of the last screen', { timeout: 120_000 }, async () => {
    const { slow, joinId, resume } = await behindAtEnd();
    // Past the 5 s a replay waits for a client that takes nothing.
    await new Promise((r) => setTimeout(r, 7000));
    resume();
    await slow.waitForFrame((f) => f.op === 'binding_goodbye', 'goodbye', 60_000);
    const frames = slow.frames();
    const { gaps, declared } = gapsDeclared(frames, joinId);
    expect(gaps).toBeGreaterThan(0);
    expect(declared).toBe(true);
    const lagged = frames.findLastIndex((f) => f.payload.code === 'PTY_OUTPUT_LAGGED');
    expect(frames.slice(0, lagged).some((f) => f.payload.kind === 'Closed')).toBe(true);
    expect(frames[lagged + 1]!.payload.kind).toBe('Keyframe');
    expect(Buffer.from(String(frames[lagged + 1]!.payload.snapshot), 'base64').toString()).toContain(MARK);
    expect((await slow.waitForClose()).code).toBe(1000);
  });

  it('that got another log frame after its Output was dropped gets the Closed frame, PTY_OUTPUT_LAGGED and a Keyframe at once', { timeout: 120_000 }, async () => {
    // A Resize reaches the lagged member between two floods: the log from its cursor on would
    // skip the first flood's tail, so it is told it lagged instead.
    const command = `sleep 0.5; ${FLOOD}; echo; echo first-flood-done; sleep 2; ${FLOOD}; echo; echo ${MARK}`;
    const { slow, joinId, resume } = await behindAtEnd(command, {
      after: 'first-flood-done',
      run: async (fast) => {
        fast.send('pty.session_resize', { cols: 100, rows: 30 });
        await fast.waitForFrame((f) => f.payload.kind === 'Resize', 'Resize');
      },
    });
    resume();
    await slow.waitForFrame((f) => f.op === 'binding_goodbye', 'goodbye', 60_000);
    const frames = slow.frames();
    expect(frames.some((f) => f.payload.kind === 'Resize')).toBe(true);
    const { gaps, declared } = gapsDeclared(frames, joinId);
    expect(gaps).toBeGreaterThan(0);
    expect(declared).toBe(true);
    const lagged = frames.findLastIndex((f) => f.payload.code === 'PTY_OUTPUT_LAGGED');
    expect(frames[lagged - 1]!.payload.kind).toBe('Closed');
    expect(frames[lagged + 1]!.payload.kind).toBe('Keyframe');
    expect((await slow.waitForClose()).code).toBe(1000);
  });
});
