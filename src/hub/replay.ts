// A join's replay (docs/protocol.md §6.2), read a page at a time and sent as the client takes it:
// what it holds is a page and what the member's socket has queued, whatever the retained log
// holds. A client that stops reading holds the replay for REPLAY_STALL_MS; then the rest goes out
// under the slow-client rule like live Output (member.ts): past the high-water mark Output is
// dropped, and the member recovers with PTY_OUTPUT_LAGGED and a Keyframe once it reads again.
// Before, the whole range was read into memory and queued on the socket at once (docs/security.md, 8).
import type { LogEntry } from '../ports.ts';
import { BindingError } from '../errors.ts';
import { entryJsonLength, logEntryBytes } from '../protocol/output-frame.ts';
import type { HubDeps } from './deps.ts';
import type { Member } from './member.ts';
import { asFrame, type SessionLog } from './session-log.ts';
import { unicast } from './wire.ts';

/** How long a client that takes nothing holds its replay before the rest is sent (and its Output dropped). */
const REPLAY_STALL_MS = 5000;

/** A replay is sent in slices of about this many logged bytes (its JSON a third more), each when the socket has drained. */
const SLICE_BYTES = 1024 * 1024;

/** What a replay reads of its session (a flush's context has it all, src/hub/flushes.ts). */
export interface ReplayContext {
  readonly id: string;
  readonly log: SessionLog;
  readonly deps: Pick<HubDeps, 'clock' | 'replayFilter'>;
}

/** What a join asked to have replayed: frames after `from`, at most `maxBytes` of them (docs/protocol.md §6.2). */
export interface Replay {
  from: number | null | undefined;
  maxBytes: number | undefined;
}

/**
 * Sends the log frames in (replay.from, upTo] this member may see, once `upTo` is deliverable;
 * stops reading once `wanted` says the member is gone. False when none were asked for, or after
 * telling it REPLAY_OUT_OF_RANGE (nothing was sent).
 */
export async function sendReplay(ctx: ReplayContext, member: Member, replay: Replay, upTo: number, requestId: string, wanted: () => boolean): Promise<boolean> {
  if (replay.from === null || replay.from === undefined) return false;
  const pages = await ctx.log.range(replay.from, upTo);
  if (pages instanceof BindingError) {
    member.sendUnicast(unicast.error(pages, upTo, ctx.deps.clock.now(), requestId));
    return false;
  }
  const filter = ctx.deps.replayFilter;
  const visible = (e: LogEntry) => !filter || filter(ctx.id, member.clientId, e);
  const from = replay.maxBytes === undefined ? replay.from : await newestStart(pages, visible, replay.from, replay.maxBytes);
  // The replay may include frames not yet deliverable to anyone (docs/protocol.md §3.4).
  await ctx.log.deliverable(upTo);
  let pacing = true;
  for await (const page of from === replay.from && replay.maxBytes === undefined ? pages : ctx.log.pages(from, upTo)) {
    // Gone meanwhile (closed, left): nothing more to read for it.
    if (!wanted()) return true;
    for (const slice of slices(page.filter(visible))) {
      if (pacing) pacing = await member.drained(REPLAY_STALL_MS);
      member.sendBeforeKeyframe(slice.map(asFrame));
    }
  }
  return true;
}

/** A page's entries in runs of about SLICE_BYTES (a frame larger than that on its own): sizes as logged, no JSON built to count them. */
function* slices(entries: LogEntry[]): Generator<LogEntry[]> {
  let run: LogEntry[] = [];
  let bytes = 0;
  for (const e of entries) {
    run.push(e);
    bytes += logEntryBytes(e);
    if (bytes < SLICE_BYTES) continue;
    yield run;
    run = [];
    bytes = 0;
  }
  if (run.length > 0) yield run;
}

/**
 * Where a replay of at most `maxBytes` starts: after it come the newest frames whose JSON (as
 * replayed: Output stays JSON, docs/protocol.md §2.3) adds up to at most `maxBytes`, counted in
 * characters (base64 Output is ASCII; a label may not be), the last one always. A first pass over
 * the pages keeps only each frame's number and size. What is left out is as if `replay_from` had
 * been higher, so the client's cursor stays exact.
 */
async function newestStart(pages: AsyncIterable<LogEntry[]>, visible: (e: LogEntry) => boolean, from: number, maxBytes: number): Promise<number> {
  const sequences: number[] = [];
  const sizes: number[] = [];
  for await (const page of pages) {
    for (const e of page) {
      if (!visible(e)) continue;
      sequences.push(e.sequence);
      sizes.push(entryJsonLength(e));
    }
  }
  let start = sequences.length - 1;
  if (start < 0) return from;
  let total = sizes[start]!;
  while (start > 0 && total + sizes[start - 1]! <= maxBytes) total += sizes[--start]!;
  // Frames hidden from this member between the kept ones are filtered again on the second pass.
  return start === 0 ? from : sequences[start - 1]!;
}
