// UUIDv7 (RFC 9562): 48-bit ms timestamp, version, 74 random bits. Web Crypto only, so it is portable.

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/**
 * Random bytes drawn from the CSPRNG in blocks: one getRandomValues per 4096 ids instead of one per
 * frame on the output path. The pool lives with the function, like the CSPRNG itself.
 */
const randomPool = { bytes: new Uint8Array(0), at: 0 };

function random16(): Uint8Array {
  if (randomPool.at + 16 > randomPool.bytes.length) {
    randomPool.bytes = crypto.getRandomValues(new Uint8Array(16 * 4096));
    randomPool.at = 0;
  }
  const b = randomPool.bytes.slice(randomPool.at, randomPool.at + 16);
  randomPool.at += 16;
  return b;
}

export function uuidv7(nowMs: number = Date.now()): string {
  const b = random16();
  let ts = Math.floor(nowMs);
  for (let i = 5; i >= 0; i--) {
    b[i] = ts % 256;
    ts = Math.floor(ts / 256);
  }
  b[6] = 0x70 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = hex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function isUuidV7(s: string): boolean {
  return UUID_V7.test(s);
}

/** A random token for humans to paste: 32 bytes, base64url. */
export function randomToken(): string {
  const b = new Uint8Array(32);
  crypto.getRandomValues(b);
  return base64urlEncode(b);
}

export function base64urlEncode(bytes: Uint8Array): string {
  return bytesToBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

interface BufferLike {
  from(data: ArrayBufferLike, byteOffset: number, length: number): { toString(enc: string): string };
  from(data: string, enc: string): Uint8Array;
}

// Node's Buffer codec is several times faster than btoa/atob on the output hot path; feature-detected,
// not imported, so the core stays portable.
const nativeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;

export function bytesToBase64(bytes: Uint8Array): string {
  if (nativeBuffer) return nativeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let s = '';
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) {
    s += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(s);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict RFC 4648 §4 base64 (padding required); returns null on anything else. */
export function base64ToBytes(s: string): Uint8Array | null {
  if (s.length % 4 !== 0 || !BASE64.test(s)) return null;
  if (nativeBuffer) return nativeBuffer.from(s, 'base64');
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Unpadded base64url (RFC 4648 §5) as UTF-8 text; null when it is not base64url. */
export function base64urlToText(s: string): string | null {
  const std = s.replace(/-/g, '+').replace(/_/g, '/');
  const bytes = base64ToBytes(std + '='.repeat((4 - (std.length % 4)) % 4));
  return bytes && new TextDecoder().decode(bytes);
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return hex(new Uint8Array(digest));
}
