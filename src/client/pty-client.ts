// A pty-ws/v1 client for any runtime with a WebSocket: joins a session, surfaces its frames as events,
// and after a dropped connection rejoins with `replay_from` so the screen neither loses nor repeats
// content (docs/protocol.md §3, §6). The web terminal, the `attach` CLI and the tests all speak through it.
import { base64ToBytes } from '../core/ids.ts';
import { Emitter } from './emitter.ts';
import { attachProtocols, decodeBinary, decodeText, inputMessage, requestFrame, type Incoming } from './frames.ts';
import { backoffDelay, isFinalClose, Keepalive } from './link.ts';
import { ReplayCursor } from './replay-cursor.ts';
import type { ClosedInfo, ConnectionState, EndInfo, Geometry, Membership, PtyClientEvents, PtyClientOptions, Role } from './types.ts';
import { OPEN, type WebSocketLike } from './websocket.ts';

/** The Error `reason` of a join as controller refused to a principal that may only watch. */
export const CONTROL_NEEDS_CONTROL_SCOPE = 'role.controller_needs_control';

/** Input typed while the link is down waits for the rejoin, up to this much. */
const MAX_PENDING_INPUT = 64 * 1024;

export class PtyClient extends Emitter<PtyClientEvents> {
  readonly cursor = new ReplayCursor();
  state: ConnectionState = 'connecting';
  role: Role | null = null;
  clientId: string | null = null;
  membership: Membership = { controllers: [], observers: [] };
  /** The session's terminal size, from the latest Keyframe or Resize. */
  geometry: Geometry | null = null;
  /** The session's `Closed` frame, once seen. */
  closed: ClosedInfo | null = null;
  /** The server said `binding_goodbye` `server_shutdown` and no connection has been live since. */
  serverShutDown = false;

  private readonly binary: boolean;
  private wantedRole: Role;
  private size: Geometry | undefined;
  private resizePending = false;
  private ws: WebSocketLike | null = null;
  private joinId: string | null = null;
  private goodbyeReason: string | null = null;
  private socketError: string | undefined;
  private attempt = 0;
  /** The session's counter as binding_hello told it (the scrollback replay starts below it). */
  private helloSequence = 0;
  private everLive = false;
  private stopping: EndInfo | null = null;
  private ended: EndInfo | null = null;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly keepalive: Keepalive;
  private firstJoin: { resolve: () => void; reject: (e: Error) => void } | null = null;
  private readonly endWaiters: Array<(e: EndInfo) => void> = [];

  constructor(private readonly opts: PtyClientOptions) {
    super();
    this.binary = opts.binary ?? true;
    this.wantedRole = opts.role ?? 'controller';
    this.size = opts.size;
    this.keepalive = new Keepalive(opts.keepalive);
  }

  /** Opens the connection and joins; resolves once the join's Keyframe arrived (or the session is found ended). */
  connect(): Promise<void> {
    if (this.firstJoin || this.ws || this.ended) throw new Error('connect() may be called once');
    return new Promise((resolve, reject) => {
      this.firstJoin = { resolve, reject };
      this.open();
    });
  }

  /** Resolves when the client is done for good: the session ended, it left or was closed, or it gave up. */
  whenEnded(): Promise<EndInfo> {
    return this.ended ? Promise.resolve(this.ended) : new Promise((resolve) => this.endWaiters.push(resolve));
  }

  /** Sends input (PW1I under binary, `pty.session_input` otherwise); while reconnecting it waits for the rejoin. */
  send(data: Uint8Array | string): void {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    if (this.ended || this.stopping || bytes.byteLength === 0) return;
    if (this.state === 'live' && this.ws?.readyState === OPEN) {
      this.ws.send(inputMessage(this.binary, bytes));
    } else if (this.pendingBytes + bytes.byteLength <= MAX_PENDING_INPUT) {
      this.pending.push(bytes);
      this.pendingBytes += bytes.byteLength;
    }
  }

  /** Asks the server to resize the PTY (controllers only); while reconnecting it is sent after the rejoin. */
  resize(cols: number, rows: number): void {
    this.size = { cols, rows };
    if (!this.request('pty.session_resize', { cols, rows })) this.resizePending = true;
  }

  requestRole(role: Role): void {
    this.wantedRole = role;
    this.request('pty.request_role', { role });
  }

  /** Asks for a fresh Keyframe and repaints from it. */
  requestKeyframe(): void {
    this.cursor.lost();
    this.request('pty.request_keyframe', {});
  }

  /** Sends any request on the live connection (e.g. an A2A operation); returns its id, or null when not live. */
  request(op: string, payload: Record<string, unknown>): string | null {
    if (this.state !== 'live' || this.ws?.readyState !== OPEN) return null;
    const { id, text } = requestFrame(op, payload);
    this.ws.send(text);
    return id;
  }

  /** `pty.leave_session`: the server's goodbye closes the connection; no reconnect. */
  async leave(timeoutMs = 3000): Promise<EndInfo> {
    if (this.ended) return this.ended;
    this.stopping ??= { reason: 'left' };
    if (!this.request('pty.leave_session', {})) this.close();
    const t = setTimeout(() => this.close(), timeoutMs);
    const end = await this.whenEnded();
    clearTimeout(t);
    return end;
  }

  /** Closes the connection without leaving (the server detaches this member); no reconnect. */
  close(): void {
    this.stopping ??= { reason: 'client_closed' };
    const ws = this.ws;
    if (ws) {
      this.abandon(ws);
      try {
        ws.close(1000, 'client closed');
      } catch {
        // Already closing: nothing left to do.
      }
    }
    this.finish(this.stopping);
  }

  // ------------------------------------------------------------------ connection

  private open(): void {
    this.goodbyeReason = null;
    this.socketError = undefined;
    this.joinId = null;
    let ws: WebSocketLike;
    try {
      ws = this.opts.webSocket(this.opts.url, attachProtocols(this.binary, this.opts.token));
    } catch (e) {
      this.finish({ reason: 'refused', message: e instanceof Error ? e.message : String(e) });
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws === ws) this.keepalive.start(ws, () => this.linkDead(ws));
    };
    ws.onmessage = (ev) => {
      if (this.ws === ws) this.onMessage(ev.data);
    };
    ws.onerror = (ev) => {
      if (this.ws === ws) this.socketError = (ev as { message?: string }).message || 'connection failed';
    };
    ws.onclose = (ev) => {
      if (this.ws === ws) this.onSocketClosed(ev.code, ev.reason);
    };
  }

  private onMessage(data: unknown): void {
    this.keepalive.heard();
    let msg: Incoming;
    if (typeof data === 'string') msg = decodeText(data);
    else if (data instanceof ArrayBuffer) msg = decodeBinary(new Uint8Array(data));
    else if (ArrayBuffer.isView(data)) msg = decodeBinary(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    else msg = { type: 'invalid', reason: 'unknown message type' };
    this.emit('frame', msg);
    this.handle(msg);
  }

  private handle(msg: Incoming): void {
    switch (msg.type) {
      case 'hello':
        this.helloSequence = msg.payload.session.current_sequence;
        this.emit('hello', msg.payload);
        return this.join();
      case 'goodbye':
        this.goodbyeReason = msg.reason;
        if (msg.reason === 'server_shutdown') this.serverShutDown = true;
        return this.emit('goodbye', msg.reason);
      case 'output':
        // Before the join's Keyframe, Output is the join's replay (docs/protocol.md §6.1).
        if (this.cursor.logFrame(msg.sequence, true)) this.emit('output', msg.data, msg.sequence, this.state === 'joining');
        return;
      case 'error': {
        const { code, message, reason } = msg.payload;
        if (code === 'REPLAY_OUT_OF_RANGE') this.cursor.outOfRange(msg.payload.current_sequence);
        // Log frames lost for good (docs/protocol.md §6.2): the next Keyframe repaints the screen.
        if (msg.payload.first_lost_sequence !== undefined) this.cursor.lost();
        this.emit('error', { code, message, source: 'binding', requestId: msg.id, ...(reason ? { reason } : {}) });
        if (msg.id !== this.joinId || code === 'REPLAY_OUT_OF_RANGE') return;
        // The refused join left this connection without a role: it may join again, to watch.
        if (this.wantedRole === 'controller' && this.opts.observeIfControlRefused && reason === CONTROL_NEEDS_CONTROL_SCOPE) {
          this.wantedRole = 'observer';
          return this.join();
        }
        this.joinFailed(`${code}: ${message}`, msg.payload.retryable === true);
        return;
      }
      case 'pty':
        return this.handlePty(msg);
      case 'other':
        if (msg.frame.op === 'TaskStatusUpdate') this.cursor.logFrame(msg.frame.sequence, false);
        return;
      case 'invalid':
        return this.emit('error', { code: 'INVALID_FRAME', message: msg.reason, source: 'client' });
    }
  }

  private handlePty(msg: Extract<Incoming, { type: 'pty' }>): void {
    const p = msg.payload;
    switch (p.kind) {
      case 'RoleAssigned':
        this.role = p.role;
        this.clientId = p.client_id;
        return this.emit('role', { role: p.role, clientId: p.client_id, downgraded: p.downgraded ?? false, ...(p.reason ? { reason: p.reason } : {}) });
      case 'MembershipChanged':
        if (!this.cursor.logFrame(msg.sequence, false)) return;
        this.membership = { controllers: p.controllers, observers: p.observers };
        return this.emit('membership', this.membership);
      case 'Resize':
        if (!this.cursor.logFrame(msg.sequence, false)) return;
        this.geometry = { cols: p.cols, rows: p.rows };
        return this.emit('resize', { cols: p.cols, rows: p.rows, sequence: msg.sequence });
      case 'Closed':
        if (!this.cursor.logFrame(msg.sequence, false)) return;
        this.closed = { exitCode: p.exit_code, reason: p.reason, ...(p.detail ? { detail: p.detail } : {}) };
        return this.emit('closed', this.closed);
      case 'Keyframe': {
        const repaint = this.cursor.keyframe(msg.sequence, p.anchor_sequence);
        this.geometry = { cols: p.snapshot_cols, rows: p.snapshot_rows };
        const snapshot = base64ToBytes(p.snapshot) ?? new Uint8Array();
        this.emit('keyframe', { snapshot, cols: p.snapshot_cols, rows: p.snapshot_rows, anchor: p.anchor_sequence, sequence: msg.sequence, repaint });
        if (msg.id === this.joinId) this.joined();
        return;
      }
      case 'Error':
        if (p.code === 'PTY_OUTPUT_LAGGED') this.cursor.lost();
        this.emit('error', { code: p.code, message: p.message ?? p.code, source: 'pty', requestId: msg.id });
        // The join's Keyframe could not be cut (docs/protocol.md §7.4): the join is done all the
        // same, and the screen is repainted from the next Keyframe.
        if (p.code === 'KEYFRAME_UNAVAILABLE' && msg.id === this.joinId) {
          this.cursor.lost();
          this.joined();
        }
        return;
    }
  }

  private join(): void {
    const payload: Record<string, unknown> = { role: this.wantedRole };
    if (this.opts.label) payload.client_label = this.opts.label;
    if (this.size) Object.assign(payload, this.size);
    const back = this.opts.scrollbackFrames;
    const scrollbackFrom = back !== undefined && back > 0 && this.helloSequence > 0 ? Math.max(0, this.helloSequence - back) : undefined;
    const asked = this.cursor.replayFrom() ?? this.opts.replayFrom;
    const replayFrom = asked ?? scrollbackFrom;
    // Only the scrollback replay is cut short: a rejoin's replay is what its screen missed.
    if (asked === undefined && scrollbackFrom !== undefined && this.opts.scrollbackBytes !== undefined) payload.replay_max_bytes = this.opts.scrollbackBytes;
    const { id, text } = requestFrame('pty.join_session', payload, replayFrom === undefined ? {} : { replay_from: replayFrom });
    this.joinId = id;
    this.setState('joining');
    this.ws?.send(text);
  }

  private joined(): void {
    this.joinId = null;
    this.attempt = 0;
    this.everLive = true;
    this.serverShutDown = false;
    this.setState('live');
    if (this.role === 'controller') {
      if (this.resizePending && this.size) this.request('pty.session_resize', { ...this.size });
      for (const bytes of this.pending) this.ws?.send(inputMessage(this.binary, bytes));
    }
    this.resizePending = false;
    this.pending = [];
    this.pendingBytes = 0;
    this.firstJoin?.resolve();
    this.firstJoin = null;
  }

  /** A refused join: final, unless the server says a retry may work and this client was live before. */
  private joinFailed(message: string, retryable: boolean): void {
    const ws = this.ws;
    if (retryable && this.everLive) {
      this.abandon(ws);
      ws?.close(1000, 'join failed');
      return this.onSocketClosed(1011, message);
    }
    this.stopping ??= { reason: 'refused', message };
    this.close();
  }

  private onSocketClosed(code: number, reason: string): void {
    this.abandon(this.ws);
    if (this.stopping) return this.finish(this.stopping);
    if (this.closed || this.goodbyeReason === 'session_closed') return this.finish({ reason: 'session_closed', ...(this.closed ? { closed: this.closed } : {}) });
    if (this.goodbyeReason === 'leave_session') return this.finish({ reason: 'left' });
    const why = reason || this.socketError || `connection closed (${code})`;
    if (isFinalClose(code, this.socketError) || (!this.everLive && this.attempt === 0)) return this.finish({ reason: 'refused', message: why, closeCode: code });
    const delayMs = backoffDelay(this.attempt + 1, this.opts.reconnect);
    if (delayMs === null) return this.finish({ reason: 'gave_up', message: why, closeCode: code });
    this.attempt++;
    this.setState('reconnecting', delayMs);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (!this.ended && !this.stopping) this.open();
    }, delayMs);
  }

  /** No frame since the last ping: give up on this socket and reconnect. */
  private linkDead(ws: WebSocketLike): void {
    if (this.ws !== ws) return;
    try {
      ws.close(4000, 'keepalive timeout');
    } catch {
      // Closing a dead socket may throw in some runtimes; it is abandoned either way.
    }
    this.onSocketClosed(1006, 'keepalive timeout');
  }

  /** Stops listening to a socket: late events from it can no longer touch this client. */
  private abandon(ws: WebSocketLike | null): void {
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = null;
      // Not null: a socket closed while it connects reports that as an error event, which Node's
      // `ws` throws when nobody listens (Ctrl-] d before the server answered).
      ws.onerror = () => undefined;
    }
    if (this.ws === ws) this.ws = null;
    this.keepalive.stop();
  }

  private finish(info: EndInfo): void {
    if (this.ended) return;
    this.ended = this.serverShutDown ? { ...info, serverShutdown: true } : info;
    info = this.ended;
    clearTimeout(this.reconnectTimer);
    this.abandon(this.ws);
    this.setState('ended');
    this.emit('end', info);
    if (this.firstJoin) {
      if (info.reason === 'session_closed') this.firstJoin.resolve();
      else this.firstJoin.reject(new Error(`could not join: ${info.message ?? info.reason}`));
      this.firstJoin = null;
    }
    for (const w of this.endWaiters.splice(0)) w(info);
  }

  private setState(state: ConnectionState, delayMs?: number): void {
    this.state = state;
    this.emit('state', state, delayMs === undefined ? { attempt: this.attempt } : { attempt: this.attempt, delayMs });
  }
}
