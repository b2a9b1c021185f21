// A diagnostic trace of the echo path's hops (where the router and PTY host spend a keystroke's
// round trip), for the bench's `trace` figure (bench/figures/hop-trace.ts,
// docs/performance.md). Off unless PTY_HOP_TRACE_DIR names a directory: then each process
// (router, PTY host) writes `<hop> <time ms> <frame type>` lines to its own file there. Its
// name does not start with PTY_WS_ so the PTY host inherits it (src/host-link/environment.ts).
// Off, the callers hold `undefined` and pay one property check per hop.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { BINARY_DATA, BINARY_WRITE } from '../../../pty/wire/binary-frame.ts';
import type { HopTrace } from '../../ports/hop-trace.ts';

export const HOP_TRACE_ENV = 'PTY_HOP_TRACE_DIR';

/** Buffered lines are written this often (and at exit): a file write per event would be the hop. */
const FLUSH_MS = 100;

/**
 * The type of the first PTY-host frame in `bytes` (pty/wire/protocol.ts: u32 length, then the tag of
 * a binary `write` or `data` (pty/wire/binary-frame.ts), or the u32 header length and the JSON header,
 * which starts `{"t":"<type>"`), or '' for anything else.
 */
function frameType(bytes: Uint8Array | undefined): string {
  if (!bytes || bytes.byteLength < 16) return '';
  const tag = new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(4);
  if (tag === BINARY_WRITE) return 'write';
  if (tag === BINARY_DATA) return 'data';
  if (bytes[8] !== 0x7b) return '';
  const head = Buffer.from(bytes.buffer, bytes.byteOffset + 8, Math.min(40, bytes.byteLength - 8)).toString('latin1');
  return /^\{"t":"(\w+)"/.exec(head)?.[1] ?? '';
}

/** A trace writing to `<dir>/<who>-<pid>.log` when the variable is set, else undefined. */
export function hopTraceFromEnv(env: Readonly<Record<string, string | undefined>>, who: string): HopTrace | undefined {
  const dir = env[HOP_TRACE_ENV];
  if (!dir) return undefined;
  const file = join(dir, `${who}-${process.pid}.log`);
  let lines: string[] = [];
  let failed = false;
  const flush = () => {
    if (lines.length === 0 || failed) return;
    const text = lines.join('');
    lines = [];
    try {
      appendFileSync(file, text);
    } catch (e) {
      // A diagnostic never takes the process down: a directory gone stops the trace, once, aloud.
      failed = true;
      clearInterval(timer);
      process.stderr.write(`hop trace stopped: ${(e as Error).message}\n`);
    }
  };
  const timer = setInterval(flush, FLUSH_MS).unref();
  process.on('exit', flush);
  // Wall-clock milliseconds with performance.now()'s resolution: comparable across the bench's,
  // the router's and the host's processes on one machine.
  const origin = performance.timeOrigin;
  return (hop, bytes) => {
    if (!failed) lines.push(`${hop} ${(origin + performance.now()).toFixed(3)} ${frameType(bytes)}\n`);
  };
}
