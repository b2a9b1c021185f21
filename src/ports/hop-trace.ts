// The echo path’s hop trace (src/adapter/node/hop-trace.ts, docs/performance.md).
/**
 * Marks a hop of the echo path with the time it is reached (src/adapter/node/hop-trace.ts);
 * `bytes`: the PTY-host frame at that hop, if any, to name its type. A diagnostic, off unless
 * PTY_HOP_TRACE_DIR is set: its holders keep `undefined` then.
 */
export type HopTrace = (hop: string, bytes?: Uint8Array) => void;
