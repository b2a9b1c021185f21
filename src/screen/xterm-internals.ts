// What the screen model needs of @xterm/headless beyond its public API (docs/architecture.md, "The
// screen model"): a synchronous write, whether plain text may be held back now — the parser in
// its ground state and the whole screen as the active buffer's scroll region — and the exceptions
// thrown while xterm parses its write queue from its own timers, out of reach of any caller. (A UTF-8 sequence
// left half decoded needs no check: an ASCII byte never continues one, so xterm drops it, and at
// most the run's first bytes print differently, which scroll off with them.) The package is pinned (package.json); a version without these fails here, when the first
// screen is made, rather than silently parsing everything or holding back what it should not.
import type xterm from '@xterm/headless';

type Terminal = InstanceType<typeof xterm.Terminal>;

/** xterm's parser state for "ground" (ParserState.GROUND in its sources). */
const GROUND = 0;

interface Core {
  writeSync(data: Uint8Array): void;
  _writeBuffer: { _innerWrite(...args: unknown[]): void };
  _inputHandler: { _parser: { currentState: number } };
  _bufferService: { rows: number; buffer: { scrollTop: number; scrollBottom: number } };
  _charsetService: { charset?: object; setgCharset(g: number, charset: object | undefined): void };
}

export interface TerminalInternals {
  /** Parses `data` before returning. Only when xterm's own write queue is empty. */
  writeNow(data: Uint8Array): void;
  /** Whether bytes written next start in the ground state, with the whole screen scrolling. */
  plainMayStart(): boolean;
  /** Whether printable ASCII prints as itself (no other character set, such as DEC line drawing, is active). */
  asciiCharset(): boolean;
}

/**
 * `failed` hears an exception thrown while xterm parses its write queue (it runs from timers, so
 * the exception would otherwise be uncaught: in a worker, the end of every session's screen). The
 * queue stops there; the terminal is not to be used again.
 */
export function terminalInternals(term: Terminal, failed: (error: unknown) => void): TerminalInternals {
  const core = (term as unknown as { _core?: Partial<Core> })._core;
  const input = core?._inputHandler;
  if (
    typeof core?.writeSync !== 'function' ||
    typeof core._writeBuffer?._innerWrite !== 'function' ||
    typeof input?._parser?.currentState !== 'number' ||
    typeof core._bufferService?.buffer?.scrollTop !== 'number' ||
    // `charset` is only set once a character set is designated; the service's methods show it is the one meant.
    typeof core._charsetService?.setgCharset !== 'function'
  ) {
    throw new Error('this @xterm/headless lacks the internals the screen model reads (src/screen/xterm-internals.ts)');
  }
  const { _bufferService: buffers, _charsetService: charsets, _writeBuffer: queue } = core as Core;
  // An own property over the prototype's method: xterm's timers and its own recursion call it as `this._innerWrite`.
  const innerWrite = queue._innerWrite;
  queue._innerWrite = (...args) => {
    try {
      innerWrite.apply(queue, args);
    } catch (e) {
      failed(e);
    }
  };
  return {
    writeNow: (data) => core.writeSync!(data),
    plainMayStart: () => {
      const buffer = buffers.buffer;
      return input._parser.currentState === GROUND && buffer.scrollTop === 0 && buffer.scrollBottom === buffers.rows - 1;
    },
    asciiCharset: () => charsets.charset === undefined,
  };
}
