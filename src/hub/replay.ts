// A join's replay (docs/protocol.md §6.2), read and sent as the client takes it: the socket gets a
// slice while its queue is under the slow-client low mark, and what is read is sized by what the
// socket took the last time, so a replay holds no page of the log while it waits for the client,
// only what the socket has queued. A client that takes nothing for REPLAY_STALL_MS gets no more of
// it: the rest is not read, the client is told PTY_OUTPUT_LAGGED before its Keyframe, and its
// Output is dropped until it reads again (member.ts). A replay of any log to a client that never
// reads costs the router about the low mark and a slice (docs/security.md, 8).
import type { LogEntry } from '../protocol/logged-frames.ts';
import type { LostRange } from '../ports/store.ts';
import { BindingError } from '../protocol/errors.ts';
import { entryJsonLength, logEntryBytes } from '../protocol/output-frame.ts';
import type { HubDeps } from './deps.ts';
import { lostInReplayError } from './log-loss.ts';
import type { Member } from './member.ts';
import { asFrame, REPLAY_PAGE_FRAMES, type SessionLog } from './session-log.ts';

/** How long a client that takes nothing holds its replay before the rest is given up. */
const REPLAY_STALL_MS = 5000;

/** A replay is sent in slices of about this many logged bytes (its JSON a third more), each while the socket has room. */
const SLICE_BYTES = 256 * 1024;

/** A replay reads about this many logged bytes at a time, fewer when the socket took less. */
const PAGE_BYTES = 1024 * 1024;

/** The first read's frames: as many of the largest Output frames (64 KiB) as make PAGE_BYTES. */
const FIRST_PAGE_FRAMES = 16;

/** What a replay reads of its session (a flush's context has it all, src/hub/flushes.ts). */
export interface ReplayContext {
  readonly id: string;
  readonly log: SessionLog;
  readonly deps: Pick<HubDeps, 'replayFilter' | 'metrics'>;
}

/** What a join asked to have replayed: frames after `from`, at most `maxBytes` of them (docs/protocol.md §6.2). */
export interface Replay {
  from: number | null | undefined;
  maxBytes: number | undefined;
}

/**
 * How a replay went: `none` asked for (or REPLAY_OUT_OF_RANGE told in its place), `sent` to the end
 * (or to the member's leaving), `crossed`: sent to the end across a lost run it declared (a
 * Keyframe must follow), or `cut` short at a client that stopped reading: the frames after the
 * last one sent were not.
 */
export type ReplayOutcome = 'none' | 'sent' | 'crossed' | 'cut';

/**
 * Sends the log frames in (replay.from, upTo] this member may see, once `upTo` is deliverable;
 * stops reading once `wanted` says the member is gone.
 */
export async function sendReplay(ctx: ReplayContext, member: Member, replay: Replay, upTo: number, requestId: string | undefined, wanted: () => boolean): Promise<ReplayOutcome> {
  if (replay.from === null || replay.from === undefined) return 'none';
  const pages = await ctx.log.range(replay.from, upTo);
  if (pages instanceof BindingError) {
    member.tell({ kind: 'Error', error: pages, sequence: upTo, id: requestId });
    return 'none';
  }
  const filter = ctx.deps.replayFilter;
  const visible = (e: LogEntry) => !filter || filter(ctx.id, member.clientId, e);
  let after = replay.maxBytes === undefined ? replay.from : await newestStart(pages, visible, replay.from, replay.maxBytes);
  // The replay may include frames not yet deliverable to anyone (docs/protocol.md §3.4).
  await ctx.log.deliverable(upTo);
  const holes = new LostRuns(await ctx.log.lost(after, upTo));
  let frames = FIRST_PAGE_FRAMES;
  let crossed = false;
  while (after < upTo) {
    // Gone meanwhile (closed, left): nothing more to read for it.
    if (!wanted() || !member.connected) return 'sent';
    if (!(await member.drained(REPLAY_STALL_MS))) return 'cut';
    if (!wanted() || !member.connected) return 'sent';
    // A run lost for good is declared where it would have been (DECISIONS §18); the frames
    // after it follow, and the next Keyframe repaints the client's screen.
    const hole = holes.at(after);
    if (hole) {
      member.tell({ kind: 'Error', error: lostInReplayError(hole), sequence: member.lastSequence });
      ctx.deps.metrics.inc('replay_lost_runs_total');
      crossed = true;
      after = Math.max(after, hole.last);
      continue;
    }
    const end = holes.before(after, upTo);
    const page = await ctx.log.page(after, end, frames);
    if (page.length === 0) {
      if (end === upTo) break;
      after = end;
      continue;
    }
    const taken = sendWhileRoom(member, page, visible);
    after = page[taken - 1]!.sequence;
    frames = nextPageFrames(page, taken);
  }
  return crossed ? 'crossed' : 'sent';
}

/** The lost runs a replay crosses, in order. */
class LostRuns {
  constructor(private readonly runs: LostRange[]) {}

  /** The run that starts right after `after` (or holds it), if any. */
  at(after: number): LostRange | undefined {
    return this.runs.find((r) => r.first <= after + 1 && r.last > after);
  }

  /** Where reading must stop before the next run after `after`: `upTo` when there is none. */
  before(after: number, upTo: number): number {
    const next = this.runs.find((r) => r.first > after + 1);
    return next === undefined ? upTo : Math.min(upTo, next.first - 1);
  }
}

/** Sends the page's slices while the member's socket has room (the first one always); the number of its entries that went. */
function sendWhileRoom(member: Member, page: LogEntry[], visible: (e: LogEntry) => boolean): number {
  let taken = 0;
  for (const slice of slices(page)) {
    // The rest is let go of and read again once the socket has drained: it is not held meanwhile.
    if (taken > 0 && !member.hasRoom) break;
    member.sendBeforeKeyframe(slice.filter(visible).map(asFrame));
    taken += slice.length;
  }
  return taken;
}

/** The next read: about PAGE_BYTES of frames the size of this page's, no more than the socket took of it. */
function nextPageFrames(page: LogEntry[], taken: number): number {
  let bytes = 0;
  for (const e of page) bytes += logEntryBytes(e);
  const fit = Math.floor((PAGE_BYTES * page.length) / Math.max(1, bytes));
  const cap = taken < page.length ? taken : REPLAY_PAGE_FRAMES;
  return Math.max(1, Math.min(fit, cap));
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
