// GET …/sessions/{session_id}/recording.cast: the retained log streamed as asciicast v2.
import type { Logger } from '../src/ports/logger.ts';
import type { SessionRecord, Store } from '../src/ports/store.ts';
import { ASCIICAST_CONTENT_TYPE, asciicastChunks } from '../src/recording/asciicast.ts';

export function recordingResponse(store: Store, rec: SessionRecord, logger: Logger): Response {
  const chunks = asciicastChunks(store, rec);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      } catch (e) {
        // Headers are gone already: all that is left is to cut the stream short.
        logger.log('error', 'recording stream failed', { session: rec.id, error: e });
        controller.error(e);
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
  return new Response(body, {
    headers: {
      'content-type': ASCIICAST_CONTENT_TYPE,
      'content-disposition': `attachment; filename="${rec.id}.cast"`,
      'cache-control': 'no-store',
    },
  });
}
