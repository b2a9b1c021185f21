// An Output log frame kept as the PTY's bytes (docs/protocol.md §3.5). Its JSON text (base64 in an
// envelope) and its PW1O form are each built on first use: a session whose clients are all binary
// never base64-encodes its output, and the log stores the bytes as they came, with the frame's id
// so that a replay sends the very frame a live client got.
import type { LogEntry } from './logged-frames.ts';
import { encodeOutputFrame, writeOutputHead } from './binary.ts';
import { PTY_FRAME_OP } from './frames.ts';
import { base64ToBytes, bytesToBase64 } from '../core/ids.ts';
import { loggedPtyPayload } from './logged-frames.ts';

export class OutputFrame {
  #json: string | undefined;
  #binary: Uint8Array | undefined;

  constructor(
    readonly id: string,
    readonly sequence: number,
    /** When it was logged (milliseconds since the epoch): the frame's `ts`. */
    readonly at: number,
    readonly data: Uint8Array,
    /**
     * `data` with room for the PW1O head before it, in the same memory, when the caller made it so
     * (src/hub/gathered-output.ts): the PW1O form is then written into that room, not copied.
     */
    private readonly framed?: Uint8Array,
  ) {}

  /**
   * The text ptyFrameJson makes of it, key for key, written out directly: a replay builds a
   * thousand of these at once (docs/performance.md, replay), and the base64 needs no escaping.
   */
  get json(): string {
    return (this.#json ??= outputJson(this.id, new Date(this.at).toISOString(), this.sequence, bytesToBase64(this.data)));
  }

  get binary(): Uint8Array {
    return (this.#binary ??= this.framed ? writeOutputHead(this.framed, this.sequence) : encodeOutputFrame(this.sequence, this.data));
  }
}

/** An Output frame's JSON text, key for key as ptyFrameJson makes it; `base64` needs no escaping. */
function outputJson(id: string, ts: string, sequence: number, base64: string): string {
  return `{"op":"${PTY_FRAME_OP}","id":${JSON.stringify(id)},"ts":"${ts}","sequence":${sequence},"payload":{"kind":"Output","stream":"stdout","data":"${base64}"}}`;
}

/** toISOString's length: every `ts` of an Output frame has it. */
const TS_CHARS = 24;

/** The log entry of an Output frame: `frame` is its JSON text, built only if someone reads it. */
export function outputEntry(sessionId: string, output: OutputFrame, hostEvent?: LogEntry['hostEvent']): LogEntry {
  const entry: LogEntry = {
    sessionId,
    sequence: output.sequence,
    kind: 'Output',
    createdAt: output.at,
    output,
    get frame() {
      return output.json;
    },
  };
  if (hostEvent) entry.hostEvent = hostEvent;
  return entry;
}

/**
 * The length of an entry's JSON text without building it (docs/protocol.md §6.2, replay_max_bytes:
 * a replay's budget counts frames it may not send). An Output frame's is its envelope with the
 * data left empty, plus the base64.
 */
export function entryJsonLength(entry: LogEntry): number {
  const out = entry.output;
  if (!out) return entry.frame.length;
  return outputJson(out.id, '0'.repeat(TS_CHARS), entry.sequence, '').length + 4 * Math.ceil(out.data.byteLength / 3);
}

/** What an entry weighs in a write queue or a commit: its bytes as the store will keep them. */
export function logEntryBytes(entry: LogEntry): number {
  return entry.output ? entry.output.data.byteLength : entry.frame.length;
}

/** The PTY bytes of a logged Output frame, kept as bytes or, in a row of a database written in the JSON-only form, inside its JSON; null if it holds none. */
export function outputBytes(entry: LogEntry): Uint8Array | null {
  if (entry.output) return entry.output.data;
  const p = loggedPtyPayload(entry.frame);
  return p?.kind === 'Output' ? base64ToBytes(p.data) : null;
}
