// The little file and path handling the Deno adapter needs (no node:path, no jsr @std/path).
const encoder = new TextEncoder();

/** Writes all of `text`: a pipe may take less than asked in one writeSync. */
export function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  const bytes = encoder.encode(text);
  for (let off = 0; off < bytes.byteLength; ) off += file.writeSync(bytes.subarray(off));
}

export function absolute(path: string): string {
  return path.startsWith('/') ? path : `${Deno.cwd()}/${path}`;
}

export function dirname(path: string): string {
  return path.slice(0, path.lastIndexOf('/')) || '/';
}
