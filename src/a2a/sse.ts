// Server-Sent Events for the standard bindings' streams: one `data:` line of JSON per event, a
// comment line while nothing happens (so idle proxies keep the stream), and the reader going away
// ends the source at once (docs/a2a.md, Streams).
const KEEPALIVE_MS = 15_000;
const KEEPALIVE = Symbol('keepalive');

export const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' } as const;

/**
 * `encode` makes an event's data; `failure` the whole SSE event for an error that ends the stream;
 * `ended` is called once when the stream is over (its last event sent, or its reader gone).
 */
export function sseResponse<T>(events: AsyncIterable<T>, encode: (event: T) => unknown, failure: (e: unknown) => string, ended: () => void = () => undefined): Response {
  const it = events[Symbol.asyncIterator]();
  const bytes = new TextEncoder();
  let pending: Promise<IteratorResult<T>> | null = null;
  // The reader went away while a pull waited: nothing more may be enqueued (it would throw).
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        pending ??= it.next();
        const tick = new Promise<typeof KEEPALIVE>((r) => (timer = setTimeout(() => r(KEEPALIVE), KEEPALIVE_MS)));
        const r = await Promise.race([pending, tick]);
        if (cancelled) return;
        if (r === KEEPALIVE) return controller.enqueue(bytes.encode(': keepalive\n\n'));
        pending = null;
        if (r.done) {
          controller.close();
          ended();
        }
        else controller.enqueue(bytes.encode(`data: ${JSON.stringify(encode(r.value))}\n\n`));
      } catch (e) {
        if (cancelled) return;
        controller.enqueue(bytes.encode(failure(e)));
        controller.close();
        ended();
      } finally {
        clearTimeout(timer);
      }
    },
    async cancel() {
      cancelled = true;
      ended();
      await it.return?.();
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}
