// A task's artifact as SSE events small enough for any reader (docs/a2a.md, Streams). A command may
// print up to 8 MiB (src/tasks/task-service.ts) and one event carried all of it: the official SDK
// reads an SSE event of at most 4 MiB and failed the whole stream past that. A2A v1.0 streams an
// artifact in chunks: the first with `append: false`, the rest `append: true`, `lastChunk` on the
// last; each chunk's text parts hold at most CHUNK_JSON_CHARS once JSON-encoded (terminal
// output's escape bytes grow up to six times as JSON).
import type { Artifact, Part, TaskArtifactUpdateEvent } from '../protocol/a2a.ts';

/** The most JSON one chunk's text may take: well under the SDK's 4 MiB an event. */
export const CHUNK_JSON_CHARS = 1024 * 1024;

/** The events that carry `artifact` of a task, in order. */
export function artifactChunks(taskId: string, contextId: string, artifact: Artifact, limit = CHUNK_JSON_CHARS): TaskArtifactUpdateEvent[] {
  const groups: Part[][] = [[]];
  let used = 0;
  for (const part of artifact.parts) {
    for (const piece of pieces(part, limit)) {
      const size = piece.text === undefined ? JSON.stringify(piece).length : JSON.stringify(piece.text).length;
      if (used > 0 && used + size > limit) {
        groups.push([]);
        used = 0;
      }
      groups[groups.length - 1]!.push(piece);
      used += size;
    }
  }
  return groups.map((parts, i) => ({
    taskId,
    contextId,
    // The first chunk carries the artifact's name, description and metadata; the others only its id.
    artifact: i === 0 ? { ...artifact, parts } : { artifactId: artifact.artifactId, parts },
    append: i > 0,
    lastChunk: i === groups.length - 1,
  }));
}

/** A text part cut into parts whose JSON text is at most `limit`; any other part as it is. */
function* pieces(part: Part, limit: number): Generator<Part> {
  const text = part.text;
  if (text === undefined || JSON.stringify(text).length <= limit) {
    yield part;
    return;
  }
  let at = 0;
  while (at < text.length) {
    let n = Math.min(limit, text.length - at);
    while (n > 1 && JSON.stringify(text.slice(at, at + n)).length > limit) n = Math.ceil(n / 2);
    // Never between the two halves of a surrogate pair.
    if (at + n < text.length && isHighSurrogate(text.charCodeAt(at + n - 1))) n = n > 1 ? n - 1 : n + 1;
    yield { ...part, text: text.slice(at, at + n) };
    at += n;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
