// An SSE body whose reader goes away while an event is awaited (src/a2a/sse.ts): nothing is
// enqueued after, and the stream's failure path (which logs an error in the routes) is not taken.
// Before, every client that disconnected from a stream wrote an error line (a review: 500 streams
// closed, 500 lines of "Controller is already closed").
import { describe, expect, it } from 'vitest';
import { sseResponse } from '../../src/a2a/sse.ts';

describe('sseResponse', () => {
  it('takes no failure path when the reader cancels while an event is awaited', async () => {
    let release: () => void = () => undefined;
    const events: AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<number>>((r) => (release = () => r({ done: false, value: 1 }))),
        return: () => Promise.resolve({ done: true, value: undefined }),
      }),
    };
    const failures: unknown[] = [];
    const res = sseResponse(events, (n) => n, (e) => {
      failures.push(e);
      return 'event: error\n\n';
    });
    const reader = res.body!.getReader();
    const first = reader.read();
    await new Promise((r) => setTimeout(r, 10));
    await reader.cancel();
    release();
    await new Promise((r) => setTimeout(r, 20));
    expect(await first).toEqual({ done: true, value: undefined });
    expect(failures).toEqual([]);
  });
});
