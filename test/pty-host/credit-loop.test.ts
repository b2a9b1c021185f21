// The credit loop, one per session (docs/architecture.md, "The credit loop"), driven with fakes and
// a fake clock: the host's event stream (pty/event-stream.ts) over connections the test plays. A
// session pauses past the high mark and resumes under the low one; one slow session never pauses
// another; a durability ack gives no credit and credit forgets nothing; a connection that gives
// no credit back is not bounded, and one that leaves takes its loop with it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Connection } from '../../pty/connection.ts';
import { CreditLoop } from '../../pty/wire/credit-loop.ts';
import { EventStream } from '../../pty/event-stream.ts';
import { FrameDecoder } from '../../pty/wire/frame-decoder.ts';
import { HostMessageSchema, type HostMessage } from '../../pty/wire/protocol.ts';
import { CREDIT_HIGH_BYTES, CREDIT_LOW_BYTES, OUTPUT_BATCH_MAX_BYTES, OUTPUT_FRAME_MAX_BYTES } from '../../src/core/flow-budget.ts';

const KiB = 1024;
const quiet = { log: () => undefined, child: () => quiet };

/** A router connection the test plays: the events it was sent, decoded. */
function router() {
  const decoder = new FrameDecoder(HostMessageSchema);
  const got: HostMessage[] = [];
  const conn = {
    send: (frame: Uint8Array) => {
      decoder.push(frame.slice());
      for (let m = decoder.next(); m; m = decoder.next()) got.push(m);
    },
  } as unknown as Connection;
  const bytes = (sessionId: string) => got.reduce((n, m) => n + (m.t === 'data' && m.sessionId === sessionId ? m.data.byteLength : 0), 0);
  const last = (sessionId: string) => got.reduce((n, m) => ((m.t === 'data' || m.t === 'exit') && m.sessionId === sessionId && m.n !== undefined ? Math.max(n, m.n) : n), 0);
  return { conn, got, bytes, last };
}

function rig() {
  const flows: Array<string | undefined> = [];
  const events = new EventStream(quiet, (sessionId) => flows.push(sessionId), 'epoch-1');
  /** A PTY read of `bytes` (4 KiB reads batch; the batch goes out once it fills a frame, or after 2 ms). */
  const read = (sessionId: string, bytes: number) => {
    for (let left = bytes; left > 0; left -= 4 * KiB) events.output(sessionId, Buffer.alloc(Math.min(4 * KiB, left), 0x61));
    vi.advanceTimersByTime(2);
  };
  /** Reads a session's PTY while it is not paused, as the host does; returns how much it read. */
  const flood = (sessionId: string, most = 4 * CREDIT_HIGH_BYTES) => {
    let read_ = 0;
    while (!events.sessionPaused(sessionId) && read_ < most) {
      read(sessionId, 4 * KiB);
      read_ += 4 * KiB;
    }
    return read_;
  };
  return { events, flows, read, flood };
}

describe('the credit loop at the host', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('pauses a session past the high mark and resumes it under the low mark, by credit alone', () => {
    const { events, flows, flood } = rig();
    const r = router();
    events.subscribe(r.conn, undefined, true, true);
    flood('a');
    expect(events.sessionPaused('a')).toBe(true);
    const sent = r.bytes('a');
    expect(sent).toBeGreaterThan(CREDIT_HIGH_BYTES);
    expect(sent).toBeLessThanOrEqual(CREDIT_HIGH_BYTES + OUTPUT_BATCH_MAX_BYTES);
    expect(flows).toContain('a');

    // Credit down to just above the low mark: still paused.
    events.credit(r.conn, 'a', sent - CREDIT_LOW_BYTES - 1);
    expect(events.sessionPaused('a')).toBe(true);
    flows.length = 0;
    events.credit(r.conn, 'a', 1);
    expect(events.sessionPaused('a')).toBe(false);
    expect(flows).toEqual(['a']);
  });

  it('never pauses another session for one the router does not take', () => {
    const { events, flood, read } = rig();
    const r = router();
    events.subscribe(r.conn, undefined, true, true);
    flood('slow');
    expect(events.sessionPaused('slow')).toBe(true);
    for (let i = 0; i < 20; i++) {
      read('quick', 10 * KiB);
      events.credit(r.conn, 'quick', 10 * KiB);
      expect(events.sessionPaused('quick')).toBe(false);
    }
    expect(r.bytes('quick')).toBe(200 * KiB);
    expect(events.anyPaused).toBe(true);
    expect(events.sessionPaused('slow')).toBe(true);
  });

  it('keeps durability apart: an ack gives no credit, and credit forgets no event', () => {
    const { events, flood } = rig();
    const r = router();
    events.subscribe(r.conn, undefined, true, true);
    flood('a');
    events.ack('a', r.last('a'));
    expect(events.sessionPaused('a')).toBe(true);

    const { events: other, flood: flood2 } = rig();
    const first = router();
    other.subscribe(first.conn, undefined, true, true);
    flood2('a');
    other.credit(first.conn, 'a', first.bytes('a'));
    expect(other.sessionPaused('a')).toBe(false);
    // Taken is not journaled: the next router still gets every event again.
    other.closed(first.conn);
    const second = router();
    other.subscribe(second.conn, undefined, true, false);
    expect(second.bytes('a')).toBe(first.bytes('a'));
  });

  it('does not bound a connection that gives no credit back, and ends a loop with its connection', () => {
    const { events, flood } = rig();
    const free = router();
    events.subscribe(free.conn, undefined, true, false);
    expect(flood('a', 8 * CREDIT_HIGH_BYTES)).toBe(8 * CREDIT_HIGH_BYTES);
    expect(events.sessionPaused('a')).toBe(false);

    const crediting = router();
    events.subscribe(crediting.conn, { epoch: 'epoch-1', after: { a: free.last('a') } }, true, true);
    // What its resume names as journaled is not sent to it, and holds none of its credit.
    expect(crediting.bytes('a')).toBe(0);
    flood('a');
    expect(events.sessionPaused('a')).toBe(true);
    events.closed(crediting.conn);
    expect(events.sessionPaused('a')).toBe(false);
  });

  it('forgets an ended session', () => {
    const { events, flood } = rig();
    const r = router();
    events.subscribe(r.conn, undefined, true, true);
    flood('a');
    events.exit({ sessionId: 'a', backend: 'native', pid: 1, cols: 80, rows: 24 }, { exitCode: 0, signal: null });
    expect(events.anyPaused).toBe(false);
  });

  it('sends output in frames that fit the largest frame (src/core/flow-budget.ts), never more', () => {
    const { events, read } = rig();
    const sizes: number[] = [];
    events.subscribe({ send: (f: Uint8Array) => sizes.push(f.byteLength) } as unknown as Connection, undefined, true, false);
    read('3f2504e0-4f89-41d3-9a0c-0305e82c3301', 1024 * KiB);
    expect(sizes.length).toBeGreaterThan(1);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(OUTPUT_FRAME_MAX_BYTES);
  });
});

describe('CreditLoop', () => {
  it('counts per session, with hysteresis between the marks', () => {
    const loop = new CreditLoop(100, 40);
    expect(loop.sent('a', 100)).toBe(false);
    expect(loop.sent('a', 1)).toBe(true);
    expect(loop.sent('a', 50)).toBe(false);
    expect(loop.sent('b', 10)).toBe(false);
    expect(loop.paused('b')).toBe(false);
    expect(loop.taken('a', 110)).toBe(false);
    expect(loop.untaken('a')).toBe(41);
    expect(loop.taken('a', 1)).toBe(true);
    // Credit for more than is untaken (sent to an earlier connection) counts as all of it.
    expect(loop.taken('a', 1000)).toBe(false);
    expect(loop.untaken('a')).toBe(0);
    expect(loop.anyPaused).toBe(false);
  });
});
