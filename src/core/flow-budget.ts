// Every flow-control and budget figure of the output path, in one place, each with why it has its
// value (docs/architecture.md, "The credit loop"). Read by both processes — the PTY host (pty/) and
// the router (src/) — so it is portable: plain numbers, no runtime API. A figure that must agree
// with one in the other process names it.

const KiB = 1024;
const MiB = 1024 * KiB;

// ---------------------------------------------------------------- the host link (both processes)

/**
 * What one read of the host link takes at most (the router's reused read buffer, Node and Deno
 * adapters). Four of the host's largest output frames (OUTPUT_FRAME_MAX_BYTES): under a flood the
 * link holds frames back to back, a read boundary cuts at most one of them, so most frames arrive
 * whole and are decoded in place, without a copy (pty/wire/frame-decoder.ts).
 */
export const LINK_READ_BYTES = 4 * 64 * KiB;

/**
 * The host's largest `data` frame, header included: a session's output batch is sent before
 * adding a read would pass it. A quarter of LINK_READ_BYTES (see there); large enough that the
 * router numbers, logs and sends a few large frames instead of thousands of small ones.
 */
export const OUTPUT_FRAME_MAX_BYTES = 64 * KiB;

/**
 * Room kept in OUTPUT_FRAME_MAX_BYTES for a `data` frame's header: the binary form's is 20 bytes
 * plus the session id (a UUID: 36), the JSON form's about 100 plus the id.
 */
export const OUTPUT_FRAME_HEAD_ROOM = 1 * KiB;

/** A session's output batch holds at most this much: OUTPUT_FRAME_MAX_BYTES less the header's room. */
export const OUTPUT_BATCH_MAX_BYTES = OUTPUT_FRAME_MAX_BYTES - OUTPUT_FRAME_HEAD_ROOM;

/**
 * How long a batch waits for the next read after a read that filled most of node-pty's 4 KiB
 * (more is coming). Short enough to be below a frame of a 60 Hz screen; a short read (an echo,
 * the end of a burst) never waits.
 */
export const OUTPUT_BATCH_MS = 2;

/** A PTY read this long or longer means more is coming (node-pty reads 4 KiB at a time). */
export const STREAMING_READ_BYTES = 2 * KiB;

// ---------------------------------------------------------------- the credit loop (one per session)

/**
 * The credit loop's high mark: a session's output bytes sent over the host link and not yet taken
 * by the router; past it the host pauses that session's PTY. Two of the largest frames
 * (OUTPUT_FRAME_MAX_BYTES), so the host reads the next while the router handles one; and what
 * another session's next echo may find queued ahead of it on the link.
 */
export const CREDIT_HIGH_BYTES = 2 * OUTPUT_FRAME_MAX_BYTES;

/**
 * The credit loop's low mark: under it a paused session's PTY reads again. One frame below the
 * high mark, so a PTY is not toggled per frame.
 */
export const CREDIT_LOW_BYTES = OUTPUT_FRAME_MAX_BYTES;

// ---------------------------------------------------------------- durability (separate from credit)

/**
 * Events the host keeps for a resend until the router says they are journaled (`ack`), at most
 * this many bytes: a router that never acknowledges must not grow the host without bound.
 */
export const HOST_UNACKED_KEEP_BYTES = 64 * MiB;

// ---------------------------------------------------------------- why the router withholds credit

/**
 * A session's consumers in the router, each with a high and a low mark: while any is past its
 * high mark the router takes none of that session's output (its credit is withheld), until every
 * one is under its low mark again.
 */
export const CONSUMER_MARKS = {
  /** Bytes given to the session's emulator and not parsed yet (@xterm/headless drops data past 50 MB). */
  screen: { high: 8 * MiB, low: 1 * MiB },
  /** The session's frames queued for the database and not committed yet (under ROUTER_BACKSTOP_MARKS.log). */
  log: { high: 4 * MiB, low: 1 * MiB },
  /** Bytes queued on *every* member's socket (each one behind): well under the lag mark (config `lag`, 16 MiB). */
  clients: { high: 1 * MiB, low: 256 * KiB },
} as const;

/**
 * The router-wide backstop, all sessions together: past it the router stops reading the host
 * link, which pauses every PTY. The log's is under LOG_QUEUE_CAP_BYTES, past which frames would
 * be dropped.
 */
export const ROUTER_BACKSTOP_MARKS = {
  screens: { high: 32 * MiB, low: 8 * MiB },
  log: { high: 32 * MiB, low: 16 * MiB },
} as const;

/**
 * Log frames the store queues for the database at most (storage/store.ts): past it the oldest are
 * given up on (reported as lost). Twice ROUTER_BACKSTOP_MARKS.log.high, so the backstop stops
 * reading long before a frame is dropped while commits are merely slow.
 */
export const LOG_QUEUE_CAP_BYTES = 64 * MiB;

// ---------------------------------------------------------------- the router's turns

/**
 * Output gathered in one event-loop turn is cut into log frames of at most this size: the
 * host's frames (OUTPUT_FRAME_MAX_BYTES) are not cut.
 */
export const LOG_OUTPUT_FRAME_BYTES = OUTPUT_FRAME_MAX_BYTES;

/**
 * A turn handles at most this much of one session's output before it yields to the other
 * sessions and the sockets' reads (round robin): a quarter of a frame, at least one frame.
 */
export const TURN_BUDGET_BYTES = 16 * KiB;

// ---------------------------------------------------------------- input (the other direction)

/**
 * Input of one session written to the host link and not yet handed to the OS, at most: past it
 * the router refuses that session's input, so another session's keystrokes wait behind no more.
 * Matches PTY_INPUT_CAP_BYTES, what the host keeps of it that the program has not read.
 */
export const INPUT_IN_FLIGHT_BYTES = 1 * MiB;

/** Input the host keeps for a session whose program has not read it (see INPUT_IN_FLIGHT_BYTES). */
export const PTY_INPUT_CAP_BYTES = 1 * MiB;

// ---------------------------------------------------------------- interactive priority (a rate limit, not flow)

/**
 * While any other session has had input within INTERACTIVE_MS, a session streaming faster than
 * BULK_BYTES_PER_S (over at least BULK_BYTES) reads half the time, resting after each BULK_BYTES
 * as long as it has just read, at most MAX_REST_MS (pty/bulk-pacing.ts): a flood takes half the
 * machine, not all of it, while someone types elsewhere. A pause in its output longer than
 * STREAK_GAP_MS ends a streak.
 */
export const BULK_PACING = {
  INTERACTIVE_MS: 2000,
  BULK_BYTES: 16 * KiB,
  BULK_BYTES_PER_S: 1 * MiB,
  STREAK_GAP_MS: 50,
  MAX_REST_MS: 100,
} as const;

/** pty.request_keyframe at most once per this long per connection (docs/protocol.md §5.2): a rate limit. */
export const KEYFRAME_REQUEST_INTERVAL_MS = 1000;
