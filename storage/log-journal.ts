// The write-before-send journal (docs/protocol.md §3.4): every log frame is written to a local file
// with one write(2) before any client may see it, so a router that is killed loses nothing a
// client received (the operating system has the bytes; no fsync, so not a power loss). The file
// is emptied, segment by segment, once everything in it is committed, and read at the next start.
import { concatBytes } from '../src/core/bytes.ts';
import type { LogEntry } from '../src/protocol/logged-frames.ts';
import { OutputFrame, outputEntry } from '../src/protocol/output-frame.ts';

/** The journal's file, through the runtime (src/adapter/<runtime>/journal-file.ts). */
export interface JournalFile {
  /** Appends the parts with one write; returns once the operating system has them. */
  append(parts: readonly Uint8Array[]): void;
  /** The whole file. */
  read(): Uint8Array;
  /** Empties the file. */
  truncate(): void;
  close(): void;
}

/** What the journal says the router that wrote it did. */
export interface JournalContents {
  /** The boot and instance every segment was written under (null when none has a header, or they differ). */
  bootId: string | null;
  instanceId: string | null;
  entries: LogEntry[];
  /** Per session, the highest number given out whose frame the database may never get (it was dropped). */
  marks: Map<string, number>;
  /** Per PTY host epoch, per session: the highest host event logged (from frames and HOST_MARKS records). */
  hostEvents: Map<string, Record<string, number>>;
}

const HEADER = 1;
/** A frame's JSON text. */
const ENTRY = 2;
const MARK = 3;
/** An Output frame: its id, then the PTY's bytes (docs/protocol.md §3.5). */
const OUTPUT = 4;
/** The host events a recovered journal said were logged: JSON, epoch → session → event number. */
const HOST_MARKS = 5;
/** A segment this big moves the writes to the other one, which is emptied once all its frames settled. */
const ROTATE_AT_BYTES = 1024 * 1024;

interface Segment {
  file: JournalFile;
  bytes: number;
  /** Frames written here and not yet settled (committed or dropped). */
  outstanding: number;
}

/**
 * Two segments take turns: writes go to the active one; the other is emptied as soon as every
 * frame in it has left the write queue. Frames that left it dropped (the database was down) keep
 * their numbers taken: a mark in the active segment says so (docs/protocol.md §3.4).
 */
export class LogJournal {
  readonly #segments: [Segment, Segment];
  #active = 0;
  readonly #header: Uint8Array;
  readonly #encoder = new TextEncoder();
  readonly #segmentOf = new WeakMap<LogEntry, Segment>();
  /** Per session: the highest number written here, and the highest the database has committed. */
  readonly #appended = new Map<string, number>();
  readonly #committed = new Map<string, number>();

  constructor(files: [JournalFile, JournalFile], ids: { bootId: string | null; instanceId: string }) {
    this.#segments = [
      { file: files[0], bytes: 0, outstanding: 0 },
      { file: files[1], bytes: 0, outstanding: 0 },
    ];
    this.#header = concatBytes(recordParts(HEADER, [this.#encoder.encode(JSON.stringify(ids))]));
  }

  /** Both segments, as found at start. */
  contents(): Uint8Array[] {
    return this.#segments.map((s) => s.file.read());
  }

  /**
   * Starts afresh (once the contents were recovered). `hostEvents` are the host events the old
   * contents said were logged: they stay written until the PTY host has heard them (its event
   * stream is resumed after them), since a router killed before that would otherwise subscribe
   * without them and log the host's unacknowledged events a second time, under new numbers.
   * Header and marks go in one write: the journal is never empty of them in between.
   */
  reset(hostEvents: ReadonlyMap<string, Record<string, number>> = new Map()): void {
    for (const s of this.#segments) this.#empty(s);
    this.#active = 0;
    const parts = [this.#header];
    if (hostEvents.size > 0) parts.push(...recordParts(HOST_MARKS, [this.#encoder.encode(JSON.stringify(Object.fromEntries(hostEvents)))]));
    this.#write(this.#segments[0], parts);
  }

  /** Empties both segments without a header: the journal vouches for nothing any more. */
  discard(): void {
    for (const s of this.#segments) this.#empty(s);
  }

  append(entry: LogEntry): void {
    let segment = this.#segments[this.#active]!;
    const other = this.#segments[1 - this.#active]!;
    if (segment.bytes >= ROTATE_AT_BYTES && other.bytes === 0) segment = this.#rotate();
    const sid = this.#encoder.encode(entry.sessionId);
    const kind = this.#encoder.encode(entry.kind);
    const epoch = this.#encoder.encode(entry.hostEvent?.epoch ?? '');
    const output = entry.output;
    const frameId = output ? this.#encoder.encode(output.id) : new Uint8Array(0);
    const head = new Uint8Array(24 + 2 + sid.length + 1 + kind.length + 1 + epoch.length + (output ? 1 + frameId.length : 0));
    const view = new DataView(head.buffer);
    view.setFloat64(0, entry.sequence, true);
    view.setFloat64(8, entry.createdAt, true);
    view.setFloat64(16, entry.hostEvent?.n ?? 0, true);
    // u16 session id length, id, u8 kind length, kind, u8 epoch length, epoch, then the frame's
    // JSON; or (OUTPUT) u8 frame id length, frame id, then the bytes.
    const kindAt = 26 + sid.length;
    const epochAt = kindAt + 1 + kind.length;
    view.setUint16(24, sid.length, true);
    head.set(sid, 26);
    head[kindAt] = kind.length;
    head.set(kind, kindAt + 1);
    head[epochAt] = epoch.length;
    head.set(epoch, epochAt + 1);
    if (output) {
      const idAt = epochAt + 1 + epoch.length;
      head[idAt] = frameId.length;
      head.set(frameId, idAt + 1);
      this.#write(segment, recordParts(OUTPUT, [head, output.data]));
    } else {
      this.#write(segment, recordParts(ENTRY, [head, this.#encoder.encode(entry.frame)]));
    }
    segment.outstanding++;
    this.#segmentOf.set(entry, segment);
    this.#appended.set(entry.sessionId, entry.sequence);
  }

  /** Frames left the write queue, committed or dropped. */
  settled(entries: readonly LogEntry[]): void {
    for (const entry of entries) {
      const segment = this.#segmentOf.get(entry);
      if (segment) segment.outstanding--;
    }
    const other = this.#segments[1 - this.#active]!;
    if (other.outstanding === 0 && other.bytes > 0) this.#empty(other);
  }

  /** The database has the session's frames up to `sequence`. */
  committed(sessionId: string, sequence: number): void {
    this.#committed.set(sessionId, Math.max(sequence, this.#committed.get(sessionId) ?? 0));
  }

  close(): void {
    for (const s of this.#segments) s.file.close();
  }

  /**
   * The other segment (empty) becomes the active one, starting with the header and a mark for
   * every session with numbers the database does not have yet: when the old segment is emptied,
   * the marks still say they were handed out.
   */
  #rotate(): Segment {
    this.#active = 1 - this.#active;
    const segment = this.#segments[this.#active]!;
    this.#write(segment, [this.#header]);
    for (const [sessionId, sequence] of this.#appended) {
      if (sequence <= (this.#committed.get(sessionId) ?? 0)) {
        this.#appended.delete(sessionId);
        this.#committed.delete(sessionId);
        continue;
      }
      const body = new Uint8Array(8);
      new DataView(body.buffer).setFloat64(0, sequence, true);
      this.#write(segment, recordParts(MARK, [body, this.#encoder.encode(sessionId)]));
    }
    return segment;
  }

  #empty(segment: Segment): void {
    segment.file.truncate();
    segment.bytes = 0;
  }

  #write(segment: Segment, parts: readonly Uint8Array[]): void {
    segment.file.append(parts);
    for (const p of parts) segment.bytes += p.length;
  }
}

/** A record: its length (u32, of what follows), its type (u8), then the parts. */
function recordParts(type: number, parts: readonly Uint8Array[]): Uint8Array[] {
  let length = 1;
  for (const p of parts) length += p.length;
  const prefix = new Uint8Array(5);
  new DataView(prefix.buffer).setUint32(0, length, true);
  prefix[4] = type;
  return [prefix, ...parts];
}

/**
 * Parses the segments. A torn last record (the write a crash cut short) ends its segment. The
 * header counts only if every segment that holds anything starts with the same one.
 */
export function readJournal(segments: readonly Uint8Array[]): JournalContents {
  const out: JournalContents = { bootId: null, instanceId: null, entries: [], marks: new Map(), hostEvents: new Map() };
  const headers = new Set<string | null>();
  for (const bytes of segments) {
    if (bytes.length > 0) headers.add(readSegment(bytes, out));
  }
  const [only] = headers;
  if (headers.size === 1 && only) {
    const ids = JSON.parse(only) as { bootId?: string; instanceId?: string };
    out.bootId = ids.bootId ?? null;
    out.instanceId = ids.instanceId ?? null;
  }
  return out;
}

/** Adds the segment's frames and marks to `out`; returns its header (null when it does not start with one). */
function readSegment(bytes: Uint8Array, out: JournalContents): string | null {
  const decoder = new TextDecoder();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let header: string | null = null;
  for (let at = 0; at + 5 <= bytes.length; ) {
    const length = view.getUint32(at, true);
    const end = at + 4 + length;
    if (length < 1 || end > bytes.length) break;
    const type = bytes[at + 4];
    const body = at + 5;
    if (type === HEADER && at === 0) {
      header = decoder.decode(bytes.subarray(body, end));
    } else if (type === ENTRY || type === OUTPUT) {
      const sidLength = view.getUint16(body + 24, true);
      const kindAt = body + 26 + sidLength;
      const epochAt = kindAt + 1 + bytes[kindAt]!;
      const restAt = epochAt + 1 + bytes[epochAt]!;
      const sessionId = decoder.decode(bytes.subarray(body + 26, kindAt));
      const kind = decoder.decode(bytes.subarray(kindAt + 1, epochAt));
      const epoch = decoder.decode(bytes.subarray(epochAt + 1, restAt));
      const n = view.getFloat64(body + 16, true);
      const sequence = view.getFloat64(body, true);
      const createdAt = view.getFloat64(body + 8, true);
      const hostEvent = n > 0 ? { epoch, n } : undefined;
      if (hostEvent) addHostEvent(out.hostEvents, epoch, sessionId, n);
      if (type === OUTPUT) {
        const dataAt = restAt + 1 + bytes[restAt]!;
        const frameId = decoder.decode(bytes.subarray(restAt + 1, dataAt));
        // A copy: the entry outlives the file's bytes, which are read once and dropped.
        out.entries.push(outputEntry(sessionId, new OutputFrame(frameId, sequence, createdAt, bytes.slice(dataAt, end)), hostEvent));
      } else {
        out.entries.push({ sessionId, sequence, createdAt, kind, frame: decoder.decode(bytes.subarray(restAt, end)), ...(hostEvent ? { hostEvent } : {}) });
      }
    } else if (type === MARK) {
      const sessionId = decoder.decode(bytes.subarray(body + 8, end));
      out.marks.set(sessionId, Math.max(view.getFloat64(body, true), out.marks.get(sessionId) ?? 0));
    } else if (type === HOST_MARKS) {
      const marks = JSON.parse(decoder.decode(bytes.subarray(body, end))) as Record<string, Record<string, number>>;
      for (const [epoch, sessions] of Object.entries(marks)) for (const [sessionId, n] of Object.entries(sessions)) addHostEvent(out.hostEvents, epoch, sessionId, n);
    }
    at = end;
  }
  return header;
}

function addHostEvent(into: Map<string, Record<string, number>>, epoch: string, sessionId: string, n: number): void {
  const after = into.get(epoch) ?? {};
  after[sessionId] = Math.max(n, after[sessionId] ?? 0);
  into.set(epoch, after);
}
