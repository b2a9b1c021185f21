// Byte helpers shared by the router core, the storage journal and the PTY host.

/** The parts as one array: the one part itself when there is one, else a copy of them all. */
export function concatBytes<B extends ArrayBufferLike>(parts: readonly Uint8Array<B>[]): Uint8Array<B | ArrayBuffer> {
  if (parts.length === 1) return parts[0]!;
  let size = 0;
  for (const part of parts) size += part.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
