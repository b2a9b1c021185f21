// Plain text the screen model holds back from the emulator (docs/architecture.md, "The screen model"):
// printable ASCII, CR, LF and TAB, begun where the emulator's parser was in its ground state with the
// whole screen as the scroll region. Such bytes print, move the cursor right, to column 0 or down
// (a line feed, or a wrap at the right margin: a scroll at the bottom row), and change no other
// state. So once 2 × rows line advances follow a place in the run, nothing before that place can be
// on the screen: rows − 1 advances bring the cursor to the bottom row from wherever it was, and
// `rows` more scroll every row it might have met there off the top. Those bytes are dropped
// unparsed, and the cursor's column at that place is restored before the rest (CR, then CUF): a
// flood of plain text costs a scan instead of a parse.

const HT = 0x09;
const LF = 0x0a;
const CR = 0x0d;
/** A column the scan cannot know (after a TAB, or where another character set replaces ASCII). */
const UNKNOWN = -1;

/** An indexOf result as a position: `end` when not found. */
function found(at: number, end: number): number {
  return at < 0 ? end : at;
}

function isPlain(b: number): boolean {
  return b >= 0x20 ? b <= 0x7e : b === CR || b === LF || b === HT;
}

/** How many bytes at the start of `bytes` are plain. */
export function plainPrefix(bytes: Uint8Array): number {
  const n = bytes.length;
  // Byte by byte up to a 4-byte boundary of the buffer (output sits after its PW1O head's 13
  // bytes of room, src/hub/gathered-output.ts), then four bytes at a time: only a word with a
  // byte below 0x20 or above 0x7e is looked into.
  const head = (4 - (bytes.byteOffset & 3)) & 3;
  if (n <= head) {
    for (let i = 0; i < n; i++) if (!isPlain(bytes[i]!)) return i;
    return n;
  }
  for (let i = 0; i < head; i++) if (!isPlain(bytes[i]!)) return i;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + head, (n - head) >>> 2);
  for (let k = 0; k < words.length; k++) {
    const w = words[k]!;
    if (((w - 0x20202020) & ~w & 0x80808080) | ((w + 0x01010101) | w) & 0x80808080) {
      for (let j = head + 4 * k; j < head + 4 * k + 4; j++) if (!isPlain(bytes[j]!)) return j;
    }
  }
  for (let i = head + 4 * words.length; i < n; i++) if (!isPlain(bytes[i]!)) return i;
  return n;
}

/** The emulator's state where a run starts: what decides how its bytes move the cursor. */
export interface RunStart {
  cols: number;
  rows: number;
  /** The cursor's column; `cols` while a wrap is pending. */
  x: number;
  /** DECAWM: a character past the right margin goes to the next line. */
  wraparound: boolean;
  /** A line feed returns to column 0 as well (xterm's convertEol, LNM). */
  lineFeedReturns: boolean;
  /** Printable ASCII prints as itself, one column each (no other character set is active). */
  ascii: boolean;
}

/** Bytes between two places a run may be cut at, at least. */
const CUT_SPACING = 32;
/** A run holding more than this drops what it can at once (a screen of 80 × 24 keeps ~4 KiB). */
const QUIET_BYTES = 16 * 1024;
/** A held buffer of this size or less is kept for the next run; a larger one goes with its run. */
const KEEP_BUFFER = 4096;

/** One plain run not parsed yet; once open, its invisible part dropped as it grows (at most `cap` bytes held). */
export class PlainRun {
  private buf: Uint8Array | null = null;
  private length = 0;
  /** Bytes of the run before `buf[0]` (dropped, or handed on to be parsed). */
  private base = 0;
  /** After a drop: the column the held bytes start at. */
  private lead: number | null = null;
  private start: RunStart | null = null;
  /** The scan: bytes of the run scanned, the cursor's column after them, line advances so far. */
  private scanned = 0;
  private x = UNKNOWN;
  private advances = 0;
  /** Places the run may be cut at, oldest first: after each line advance whose column is known. */
  private cuts = new Float64Array(3 * 64);
  private cutHead = 0;
  private cutCount = 0;
  /** Bytes dropped unparsed so far (tests and metrics). */
  dropped = 0;

  get empty(): boolean {
    return this.length === 0 && this.lead === null;
  }

  get size(): number {
    return this.length;
  }

  /** The run may drop from now on: where it started (the bytes held so far are scanned from there). */
  open(start: RunStart): void {
    this.start = start;
    this.x = start.x;
    this.advances = 0;
    this.cutHead = this.cutCount = 0;
    this.scan();
  }

  /**
   * The run is over: what it still holds is dropped, and the next one knows nothing of this one's
   * start until it is opened (its bytes are scanned from there).
   */
  end(): void {
    this.base += this.length;
    this.scanned = this.base;
    this.length = 0;
    this.lead = null;
    this.start = null;
    this.cutHead = this.cutCount = 0;
  }

  /**
   * Appends plain bytes. When `cap` bytes are held and none can be dropped (too few line advances
   * after them, or the run is not open), the held bytes go to `overflow` first, so a run never
   * holds more (without `overflow` the caller keeps within the cap itself).
   */
  append(bytes: Uint8Array, cap: number, overflow?: (held: Uint8Array) => void): void {
    let from = 0;
    while (from < bytes.length) {
      if (this.length === cap) this.trim();
      if (this.length === cap) {
        if (!overflow) throw new Error('a plain run over its cap');
        overflow(this.take());
      }
      const n = Math.min(bytes.length - from, cap - this.length);
      this.reserve(this.length + n, cap);
      this.buf!.set(bytes.subarray(from, from + n), this.length);
      this.length += n;
      from += n;
      if (this.start) this.scan();
    }
    // Dropped as soon as it can be: a run a quiet session keeps holds about a screen of text and
    // the frame after it, not the cap.
    if (this.length > QUIET_BYTES) this.trim();
  }

  /** The held bytes to parse, after dropping what an open run can (a copy); the run is empty after. */
  take(): Uint8Array {
    this.trim();
    const lead = this.lead === null ? '' : `\r${this.lead > 0 ? `\x1b[${this.lead}C` : ''}`;
    const out = new Uint8Array(lead.length + this.length);
    for (let i = 0; i < lead.length; i++) out[i] = lead.charCodeAt(i);
    if (this.buf) out.set(this.buf.subarray(0, this.length), lead.length);
    this.base += this.length;
    this.scanned = this.base;
    this.length = 0;
    this.lead = null;
    // What is handed on is parsed: no cut can go back into it.
    this.cutHead = this.cutCount = 0;
    if (this.buf && this.buf.byteLength > KEEP_BUFFER) this.buf = null;
    if (this.cuts.length > 3 * 64) this.cuts = new Float64Array(3 * 64);
    return out;
  }

  /** Drops everything before the last cut with 2 × rows line advances after it. */
  private trim(): void {
    if (!this.start) return;
    const limit = this.advances - 2 * this.start.rows;
    let k = -1;
    for (let j = this.cutHead; j < this.cutCount && this.cuts[3 * j + 1]! <= limit; j++) k = j;
    if (k < 0) return;
    const at = this.cuts[3 * k]!;
    const drop = at - this.base;
    this.buf!.copyWithin(0, drop, this.length);
    this.length -= drop;
    this.base = at;
    this.lead = this.cuts[3 * k + 2]!;
    this.dropped += drop;
    this.cutHead = k + 1;
  }

  /**
   * Follows the cursor's column and the line advances over the bytes not scanned yet, as xterm's
   * print, LF, CR and HT move it: a span of printable characters at a time (its wraps by
   * arithmetic), the control bytes found with indexOf.
   */
  private scan(): void {
    const { cols, wraparound, lineFeedReturns, ascii } = this.start!;
    const buf = this.buf;
    if (!buf) return;
    const end = this.length;
    let x = this.x;
    let i = this.scanned - this.base;
    // The next CR, LF and HT at or after i (end when none).
    const held = buf.subarray(0, end);
    let cr = -1;
    let lf = -1;
    let ht = -1;
    while (i < end) {
      if (cr < i) cr = found(held.indexOf(CR, i), end);
      if (lf < i) lf = found(held.indexOf(LF, i), end);
      if (ht < i) ht = found(held.indexOf(HT, i), end);
      const next = Math.min(cr, lf, ht);
      const n = next - i;
      if (n > 0 && x !== UNKNOWN) {
        if (!ascii) x = UNKNOWN;
        else if (x + n <= cols) x += n;
        else if (!wraparound) x = cols;
        else {
          // A character printed with the cursor past the last column wraps first, then stands in column 0.
          const first = x < cols ? cols - x : 0;
          for (let k = i + first; k < next; k += cols) {
            this.advances++;
            this.cut(this.base + k + 1, 1);
          }
          x = ((n - first - 1) % cols) + 1;
        }
      }
      if (next === end) break;
      const b = buf[next];
      if (b === CR) x = 0;
      else if (b === LF) {
        this.advances++;
        if (lineFeedReturns) x = 0;
        else if (x >= cols) x = cols - 1;
        if (x !== UNKNOWN) this.cut(this.base + next + 1, x);
      } else if (x !== UNKNOWN && x < cols) x = UNKNOWN;
      i = next + 1;
    }
    this.x = x;
    this.scanned = this.base + end;
  }

  private cut(at: number, x: number): void {
    // One place per CUT_SPACING bytes is enough to drop by, and bounds the list by the cap.
    if (this.cutCount > this.cutHead && at - this.cuts[3 * (this.cutCount - 1)]! < CUT_SPACING) return;
    if (3 * (this.cutCount + 1) > this.cuts.length) {
      // Compact what trimming left behind, or grow.
      const live = this.cutCount - this.cutHead;
      const room = 3 * (live + 1) > this.cuts.length / 2 ? new Float64Array(this.cuts.length * 2) : this.cuts;
      room.set(this.cuts.subarray(3 * this.cutHead, 3 * this.cutCount));
      this.cuts = room;
      this.cutHead = 0;
      this.cutCount = live;
    }
    const j = 3 * this.cutCount++;
    this.cuts[j] = at;
    this.cuts[j + 1] = this.advances;
    this.cuts[j + 2] = x;
  }

  private reserve(size: number, cap: number): void {
    if (this.buf && this.buf.byteLength >= size) return;
    let capacity = Math.max(1024, this.buf?.byteLength ?? 0);
    while (capacity < size) capacity *= 2;
    const grown = new Uint8Array(Math.min(capacity, cap));
    if (this.buf) grown.set(this.buf.subarray(0, this.length));
    this.buf = grown;
  }
}
