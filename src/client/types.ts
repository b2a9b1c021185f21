// What a PtyClient tells its user: events, their payloads and the options it takes.
import type { HelloPayload, Member } from '../protocol/server-payloads.ts';
import type { Incoming } from './frames.ts';
import type { WebSocketFactory } from './websocket.ts';

export type Role = 'controller' | 'observer';

export interface Geometry {
  cols: number;
  rows: number;
}

export interface Membership {
  controllers: Member[];
  observers: Member[];
}

export interface RoleInfo {
  role: Role;
  clientId: string;
  downgraded: boolean;
  reason?: string;
}

export interface KeyframeEvent extends Geometry {
  /** The `vt100-screen-state-v1` bytes: written into a fresh terminal of cols × rows, they repaint it. */
  snapshot: Uint8Array;
  anchor: number;
  sequence: number;
  /**
   * True when the consumer's screen is unknown or lost (first join, PTY_OUTPUT_LAGGED,
   * REPLAY_OUT_OF_RANGE, a requested Keyframe): reset the terminal and write `snapshot`. When false the
   * screen is already exact and the Keyframe needs no action.
   */
  repaint: boolean;
}

export interface ClosedInfo {
  exitCode: number | null;
  /** normal, killed, timeout, instance_terminated or error (docs/protocol.md §5.3). */
  reason: string;
  detail?: string;
}

export interface ClientError {
  /** A binding code (`PERMISSION_DENIED`, `REPLAY_OUT_OF_RANGE`, ...), a PTY code (`PTY_OUTPUT_LAGGED`, ...) or `INVALID_FRAME`. */
  code: string;
  message: string;
  /** binding: an `Error` frame; pty: a `pty.session_frame` Error; client: something this client could not read. */
  source: 'binding' | 'pty' | 'client';
  /** The id of the request that failed, when the server echoed one. */
  requestId?: string;
  /** The Error frame's `reason`, when it names one (e.g. `share.revoked`, `role.controller_needs_control`). */
  reason?: string;
}

export type ConnectionState = 'connecting' | 'joining' | 'live' | 'reconnecting' | 'ended';

export interface EndInfo {
  /**
   * session_closed: the session's process ended (see `closed`); left: `leave()`; client_closed:
   * `close()`; refused: the server refused or closed for good (bad token, unknown session, ...);
   * gave_up: reconnecting failed `maxAttempts` times.
   */
  reason: 'session_closed' | 'left' | 'client_closed' | 'refused' | 'gave_up';
  closed?: ClosedInfo;
  /** The server shut down (`binding_goodbye` `server_shutdown`) and was not reached again since. */
  serverShutdown?: boolean;
  message?: string;
  closeCode?: number;
}

export interface PtyClientEvents {
  state: [ConnectionState, { attempt: number; delayMs?: number }];
  hello: [HelloPayload];
  role: [RoleInfo];
  membership: [Membership];
  /**
   * PTY output bytes, in order, each exactly once; their sequence; and whether they are replayed
   * (sent in a join's flush, before its Keyframe: printed before this connection joined). A
   * terminal must not answer the queries in replayed bytes: whoever asked is not waiting any more.
   */
  output: [Uint8Array, number, boolean];
  keyframe: [KeyframeEvent];
  resize: [Geometry & { sequence: number }];
  closed: [ClosedInfo];
  error: [ClientError];
  goodbye: [string];
  /** Every decoded server message, before the client acts on it. */
  frame: [Incoming];
  end: [EndInfo];
}

export interface PtyClientOptions {
  /** The attach URL: ws(s)://host/agents/{instance_id}/sessions/{session_id}/attach. */
  url: string;
  /** Sent as the `bearer.<base64url>` subprotocol entry. */
  token?: string | null;
  /** `pty-ws.v1.binary` (PW1O/PW1I hot path; default) or `pty-ws.v1` (JSON/base64). */
  binary?: boolean;
  /** Asked for at join (default controller); the server may assign the other. */
  role?: Role;
  label?: string;
  /** Terminal size offered at join (used when this is the session's first controller). */
  size?: Geometry;
  /**
   * `replay_from` for the first join: 0 replays the whole retained log as Output (a transcript
   * client); absent, the first join starts from the Keyframe. Rejoins always use the cursor.
   */
  replayFrom?: number;
  /**
   * Without `replayFrom`: the first join replays up to this many log frames before the current one
   * (binding_hello's `current_sequence`), so a consumer that keeps what scrolls off gets the
   * session's recent output as scrollback, not only its screen (the page on reload or a late
   * join). The first Keyframe among them still repaints the screen; a log that no longer
   * reaches back is REPLAY_OUT_OF_RANGE and the join's Keyframe repaints as without it.
   */
  scrollbackFrames?: number;
  /**
   * With `scrollbackFrames`: that replay is also cut to the newest frames that fit in this many
   * bytes (`replay_max_bytes`, docs/protocol.md §6.2), so a few huge frames do not pull megabytes
   * while many small ones still fill the scrollback. Rejoins replay everything they missed.
   */
  scrollbackBytes?: number;
  webSocket: WebSocketFactory;
  /**
   * With `role` controller: when the server refuses it because the bearer may only watch (a watch
   * share, a pty:observe token), join again as observer on the same connection instead of ending.
   */
  observeIfControlRefused?: boolean;
  /** Reconnect after a dropped connection (default on): exponential backoff between the delays. */
  reconnect?: { minDelayMs?: number; maxDelayMs?: number; maxAttempts?: number } | false;
  /** Application ping cadence and how long to wait for any frame after one before the link counts as dead. */
  keepalive?: { intervalMs: number; timeoutMs: number } | false;
}
