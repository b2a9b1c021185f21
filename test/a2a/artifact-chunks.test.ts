// An artifact cut into stream chunks (src/a2a/artifact-chunks.ts): each chunk's text within the
// limit once JSON-encoded, whatever the escapes; the texts add up to the artifact's; no surrogate
// pair cut in two; append and lastChunk as A2A v1.0 streams an artifact.
import { describe, expect, it } from 'vitest';
import { artifactChunks } from '../../src/a2a/artifact-chunks.ts';

const textOf = (parts: Array<{ text?: string }>) => parts.map((p) => p.text ?? '').join('');

describe('artifactChunks', () => {
  it('keeps a small artifact whole: one chunk, not appended, the last', () => {
    const artifact = { artifactId: 'a', name: 'output', parts: [{ text: 'hi', mediaType: 'text/plain' }], metadata: { bytes: 2 } };
    expect(artifactChunks('t', 'c', artifact)).toEqual([{ taskId: 't', contextId: 'c', artifact, append: false, lastChunk: true }]);
  });

  it('cuts a large text within the limit as JSON, escapes and surrogate pairs included', () => {
    const line = '\x1b[31m' + 'x'.repeat(60) + '😀\x1b[0m\n';
    const text = line.repeat(5000);
    const limit = 16 * 1024;
    const chunks = artifactChunks('t', 'c', { artifactId: 'a', name: 'output', parts: [{ text, mediaType: 'text/plain' }], metadata: { bytes: text.length } }, limit);
    expect(chunks.length).toBeGreaterThan(10);
    for (const c of chunks) {
      expect(JSON.stringify(textOf(c.artifact.parts)).length).toBeLessThanOrEqual(limit);
      // No lone surrogate at either end of a piece: a pair was never cut in two.
      for (const p of c.artifact.parts) expect(p.text!).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    }
    expect(chunks.map((c) => textOf(c.artifact.parts)).join('')).toBe(text);
    expect(chunks.map((c) => [c.append, c.lastChunk])).toEqual(chunks.map((_, i) => [i > 0, i === chunks.length - 1]));
    expect(chunks[0]!.artifact).toMatchObject({ name: 'output', metadata: { bytes: text.length } });
    expect(chunks[1]!.artifact).toEqual({ artifactId: 'a', parts: expect.any(Array) });
    expect(chunks[1]!.artifact.parts[0]).toMatchObject({ mediaType: 'text/plain' });
  });
});
