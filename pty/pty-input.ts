// A session's input on its way into its PTY, bounded (docs/protocol.md §7.4, §9.2).
//
// node-pty's own write() keeps, in this process, whatever the kernel's PTY buffer does not take
// (its write stream queues in JS and retries on EAGAIN at once, on every turn), without limit: a
// controller typing into a program that never reads grew the whole host by gigabytes and slowed
// every session it serves (docs/operations.md, "Input nobody reads"). So the host writes to the
// PTY master itself — non-blocking, as node-pty opened it — and keeps what the kernel has not
// taken yet in a queue of at most PTY_INPUT_CAP_BYTES; a write that does not fit is refused
// whole, and the router answers its sender with PTY_WRITE_FAILED.

import { writeSync } from 'node:fs';
import type { IPty } from 'node-pty';
import { PTY_INPUT_CAP_BYTES } from '../src/core/flow-budget.ts';
import type { Logger } from '../src/ports/logger.ts';

/** A queue the kernel will not take is tried again after 1 ms, backing off to this while nothing is taken. */
const RETRY_MAX_MS = 50;

/** Writes bytes into the PTY as far as the kernel takes them: how many it took (0: its buffer is full). */
type PtyWriter = (bytes: Uint8Array) => number;

export class PtyInput {
  readonly #write: PtyWriter;
  /** Whether the PTY's descriptor is still ours to write (see ptyInput). */
  readonly #open: () => boolean;
  readonly #log: Logger;
  readonly #cap: number;
  /** Copies of what waits, oldest first; the first may be partly written (#offset). */
  readonly #queue: Uint8Array[] = [];
  #offset = 0;
  #queued = 0;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #delay = 1;
  #closed = false;
  /** A refusal was logged since the queue last emptied (one warning per episode, not per write). */
  #warned = false;

  constructor(write: PtyWriter, open: () => boolean, log: Logger, cap = PTY_INPUT_CAP_BYTES) {
    this.#write = write;
    this.#open = open;
    this.#log = log;
    this.#cap = cap;
  }

  /** Bytes handed to this session's PTY that its kernel buffer has not taken yet. */
  get queued(): number {
    return this.#queued;
  }

  /** Takes `bytes` (written now, or queued behind what waits); returns why it refused them instead. */
  /** `checked`: the caller has just checked that the PTY is open (the host's #unwritable), so a keystroke pays for that check once. */
  write(bytes: Uint8Array, checked = false): string | undefined {
    if (this.#closed) return 'the terminal of the session is closed';
    if (bytes.byteLength === 0) return undefined;
    if (this.#queued + bytes.byteLength > this.#cap) {
      if (!this.#warned) this.#log.log('warn', 'input refused: the program is not reading its input', { queued: this.#queued, cap: this.#cap });
      this.#warned = true;
      return `the program in the session is not reading its input (${describe(this.#queued)} of earlier input still waits for it; at most ${describe(this.#cap)} may)`;
    }
    let rest = bytes;
    if (this.#queued === 0) {
      const taken = this.#attempt(bytes, checked);
      if (taken === undefined) return 'the terminal of the session is closed';
      rest = bytes.subarray(taken);
      if (rest.byteLength === 0) return undefined;
    }
    // A copy: the caller's bytes may be a view into a buffer it reads into again.
    this.#queue.push(rest.slice());
    this.#queued += rest.byteLength;
    this.#schedule();
    return undefined;
  }

  /** The PTY is gone (or replaced): what waits is dropped and nothing more is written. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#queue.length = 0;
    this.#queued = 0;
    this.#offset = 0;
  }

  /** Bytes the kernel took, or undefined once the PTY is no longer writable (then closed). */
  #attempt(bytes: Uint8Array, checked = false): number | undefined {
    if (!checked && !this.#open()) {
      this.close();
      return undefined;
    }
    try {
      return this.#write(bytes);
    } catch (err) {
      this.#log.log('warn', 'input could not be written to the PTY; what waits is dropped', { err, dropped: this.#queued + bytes.byteLength });
      this.close();
      return undefined;
    }
  }

  #schedule(): void {
    if (this.#retry !== undefined || this.#closed) return;
    this.#retry = setTimeout(() => this.#drain(), this.#delay);
    // The host's shutdown does not wait for input nobody reads.
    this.#retry.unref?.();
  }

  #drain(): void {
    this.#retry = undefined;
    let progressed = false;
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      const taken = this.#attempt(head.subarray(this.#offset));
      if (taken === undefined) return;
      if (taken > 0) progressed = true;
      this.#offset += taken;
      this.#queued -= taken;
      if (this.#offset < head.byteLength) break;
      this.#queue.shift();
      this.#offset = 0;
    }
    if (this.#queue.length === 0) {
      this.#delay = 1;
      this.#warned = false;
      return;
    }
    // A program that reads gets its input at once; one that does not costs a wake-up per RETRY_MAX_MS.
    this.#delay = progressed ? 1 : Math.min(this.#delay * 2, RETRY_MAX_MS);
    this.#schedule();
  }
}

/**
 * The input path of a PTY node-pty opened. Its master descriptor (`fd`, a getter of node-pty's
 * UnixTerminal that its typings leave out; checked with node-pty 1.1.0) is non-blocking, so a
 * full kernel buffer is EAGAIN: nothing taken. node-pty closes that descriptor only after the
 * process is reaped (its 200 ms timer) or on the read stream's EIO ('close'), so `open` says
 * whether the process lives and the terminal is not closed: past that the number may already
 * name another file. Without `fd`, input goes through node-pty's write unbounded (logged).
 */
export function ptyInput(pty: IPty, alive: () => boolean, log: Logger): PtyInput {
  const fd = (pty as IPty & { fd?: unknown }).fd;
  let closed = false;
  const open = (): boolean => !closed && alive();
  const input = new PtyInput(typeof fd === 'number' ? (bytes) => writeNonBlocking(fd, bytes) : unbounded(pty), open, log);
  if (typeof fd !== 'number') log.log('warn', 'node-pty exposes no fd: input a program does not read is not bounded');
  // Terminal#on('close'): in node-pty's class, not its typings; emitted before the descriptor closes on EIO.
  (pty as IPty & { on?: (event: 'close', listener: () => void) => void }).on?.('close', () => {
    closed = true;
    input.close();
  });
  pty.onExit(() => input.close());
  return input;
}

function writeNonBlocking(fd: number, bytes: Uint8Array): number {
  try {
    return writeSync(fd, bytes);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return 0;
    throw err;
  }
}

function unbounded(pty: IPty): PtyWriter {
  return (bytes) => {
    pty.write(Buffer.from(bytes) as unknown as string);
    return bytes.byteLength;
  };
}

function describe(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}
