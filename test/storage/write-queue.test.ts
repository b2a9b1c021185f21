// Unit test of the writer's batching: which entries go into one commit.
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/protocol/logged-frames.ts';
import { WriteQueue } from '../../storage/write-queue.ts';

function entry(sequence: number, bytes: number): LogEntry {
  return { sessionId: 's', sequence, kind: 'Output', createdAt: 0, frame: 'x'.repeat(bytes) };
}

function recordingQueue(limits: { maxBatch: number; maxBatchBytes: number }): { queue: WriteQueue; batches: number[][] } {
  const batches: number[][] = [];
  const queue = new WriteQueue({
    commitLog: async (batch) => void batches.push(batch.map((e) => e.sequence)),
    onSettled: () => undefined,
    onLost: () => undefined,
    flushIntervalMs: 1,
    maxQueuedBytes: Infinity,
    retryDelaysMs: [],
    ...limits,
  });
  return { queue, batches };
}

describe('WriteQueue batches', () => {
  it('stop growing at maxBatchBytes, and an entry bigger than that still goes, alone', async () => {
    const { queue, batches } = recordingQueue({ maxBatch: 500, maxBatchBytes: 1000 });
    for (let i = 1; i <= 5; i++) queue.appendLog(entry(i, 400));
    queue.appendLog(entry(6, 5000));
    queue.appendLog(entry(7, 100));
    await queue.flush();
    expect(batches).toEqual([[1, 2], [3, 4], [5], [6], [7]]);
  });

  it('stop growing at maxBatch entries', async () => {
    const { queue, batches } = recordingQueue({ maxBatch: 3, maxBatchBytes: 1_000_000 });
    for (let i = 1; i <= 7; i++) queue.appendLog(entry(i, 10));
    await queue.flush();
    expect(batches).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });
});
