// Unit tests of the router's end of the credit loop (src/hub/log-ledger.ts, src/hub/session-flow.ts):
// each session's share of the log queue, and whose credit is withheld when.
import { describe, expect, it } from 'vitest';
import { LogLedger } from '../../src/hub/log-ledger.ts';
import { HubFlow } from '../../src/hub/session-flow.ts';
import { NO_METRICS } from '../../src/core/metrics.ts';
import type { LogEntry } from '../../src/protocol/logged-frames.ts';
import type { QueueListener } from '../../src/ports/store.ts';
import { FakeScreen, MemoryStore } from './fakes.ts';

const MiB = 1024 * 1024;
const quiet = { log: () => undefined, child: () => quiet };

/** A store whose queue reports like the real one's: queued in appendLog, settled when the test says. */
class QueueingStore extends MemoryStore {
  readonly listeners = new Set<QueueListener>();
  override appendLog(entry: LogEntry): void {
    super.appendLog(entry);
    for (const l of this.listeners) l.queued(entry.frame.length);
  }
  override watchQueue(listener: QueueListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  settle(bytes: number): void {
    for (const l of this.listeners) l.settled(bytes);
  }
}

const entry = (sessionId: string, bytes: number): LogEntry => ({ sessionId, sequence: 1, kind: 'Output', createdAt: 0, frame: 'x'.repeat(bytes) });

describe('LogLedger', () => {
  it('attributes settled bytes to the sessions in the order their frames were queued, and resets when the queue empties', () => {
    const store = new QueueingStore();
    const ledger = new LogLedger();
    store.watchQueue(ledger.listener);
    const seen: Record<string, number> = { a: 0, b: 0 };
    ledger.track('a', { add: (n) => (seen.a! += n), done: (n) => (seen.a! -= n) });
    ledger.track('b', { add: (n) => (seen.b! += n), done: (n) => (seen.b! -= n) });
    const s = ledger.appending(store);
    s.appendLog(entry('a', 100));
    s.appendLog(entry('a', 50));
    s.appendLog(entry('b', 30));
    s.appendLog(entry('a', 20));
    expect(seen).toEqual({ a: 170, b: 30 });
    store.settle(120);
    expect(seen).toEqual({ a: 50, b: 30 });
    store.settle(40);
    expect(seen).toEqual({ a: 20, b: 20 });
    // A frame queued past the ledger is not counted; the drift it causes ends when the queue is empty.
    store.appendLog(entry('a', 10));
    expect(seen).toEqual({ a: 20, b: 20 });
    store.settle(30);
    expect(seen).toEqual({ a: 10, b: 0 });
    store.settle(20);
    expect(seen).toEqual({ a: 0, b: 0 });
  });
});

describe('HubFlow', () => {
  function rig() {
    const calls: string[] = [];
    const store = new QueueingStore();
    const flow = new HubFlow({
      pty: { credit: (id, bytes) => calls.push(`${id}:credit ${bytes}`), pauseEvents: () => calls.push('all:pause'), resumeEvents: () => calls.push('all:resume') },
      store: store,
      screens: (cols, rows) => new FakeScreen(cols, rows),
      logger: quiet,
      metrics: NO_METRICS,
      pollMs: 5,
    });
    flow.watchStore();
    return { calls, store, flow };
  }

  it("gives credit back as output is taken, and withholds a session's while its log share is past 4 MiB, alone, until under 1 MiB", () => {
    const { calls, store, flow } = rig();
    const a = flow.session('a', () => []);
    const b = flow.session('b', () => []);
    flow.taken('a', 100);
    expect(calls).toEqual(['a:credit 100']);
    b.store.appendLog(entry('b', 1000));
    a.store.appendLog(entry('a', 5 * MiB));
    flow.taken('a', 200);
    flow.taken('b', 300);
    flow.taken('a', 400);
    expect(calls).toEqual(['a:credit 100', 'b:credit 300']);
    store.settle(1000 + 3 * MiB);
    expect(calls).toEqual(['a:credit 100', 'b:credit 300']);
    store.settle(1.5 * MiB);
    expect(calls).toEqual(['a:credit 100', 'b:credit 300', 'a:credit 600']);
  });

  it("counts a disposed screen's unparsed bytes out, so its session's credit comes back", () => {
    const { calls, flow } = rig();
    const a = flow.session('a', () => []);
    const screen = a.makeScreen(80, 24);
    screen.write(new Uint8Array(9 * 1024 * 1024), 1);
    flow.taken('a', 5);
    expect(calls).toEqual([]);
    screen.dispose();
    expect(calls).toEqual(['a:credit 5']);
  });

  it('withholds credit only while every one of its members is behind', async () => {
    const { calls, flow } = rig();
    const queued = [2 * MiB, 0];
    flow.session('a', () => queued);
    flow.output('a');
    flow.taken('a', 1);
    expect(calls).toEqual(['a:credit 1']);
    queued[1] = 3 * MiB;
    flow.output('a');
    flow.taken('a', 2);
    expect(calls).toEqual(['a:credit 1']);
    queued[0] = 100;
    await new Promise((r) => setTimeout(r, 30));
    expect(calls).toEqual(['a:credit 1', 'a:credit 2']);
    flow.close();
  });

  it('gives back what a forgotten session withheld, and credit for a session it has no flow for at once', () => {
    const { calls, flow } = rig();
    const a = flow.session('a', () => []);
    a.makeScreen(80, 24).write(new Uint8Array(9 * MiB), 1);
    flow.taken('a', 7);
    flow.forget('a');
    flow.taken('gone', 3);
    expect(calls).toEqual(['a:credit 7', 'gone:credit 3']);
  });
});
