// One WebSocket's side of the binding: decode a frame, call the session, encode what comes back.
// Frames are handled strictly in arrival order, so an input right after a join waits for the join.
import type { Principal } from '../auth/principal.ts';
import { BindingError, errorPayload, PtyError, toBindingError } from '../protocol/errors.ts';
import { uuidv7 } from '../core/ids.ts';
import { decodeInputFrame } from '../protocol/binary.ts';
import { decodeClientFrame, parsePayload, type ClientEnvelope } from '../protocol/envelope.ts';
import { serverFrame, type PayloadOf } from '../protocol/frames.ts';
import { hello } from '../protocol/hello.ts';
import * as P from '../protocol/pty-payloads.ts';
import { foreignSessionField } from '../protocol/session-refs.ts';
import type { ClientConnection } from '../ports/client-connection.ts';
import type { Logger } from '../ports/logger.ts';
import { FrameRateLimiter, rateLimitError } from './frame-rate.ts';
import type { HubDeps } from './deps.ts';
import type { JoinRights } from './join-spec.ts';
import type { LiveSession } from './live-session.ts';
import { recoverLagged } from './flushes.ts';
import { clientOps, type Handler } from './client-ops.ts';
import { ResizeCoalescer } from './resize-coalescer.ts';
import { KeyframePacer } from './keyframe-pacer.ts';
import { opContext, type OpConnection } from './op-context.ts';
import { Member } from './member.ts';
import { helloSessionHost } from './session-host.ts';
import { encodeUnicast } from './wire.ts';
import type { Unicast } from './types.ts';
import { CLOSE } from '../protocol/close-codes.ts';

/** What an attachment needs of the hub that made it. */
export interface AttachmentHost {
  readonly deps: HubDeps;
  live(sessionId: string): Promise<LiveSession | undefined>;
  /** The A2A core operations registered on the hub: what binding_hello advertises. */
  supportedOperations(): string[];
  /** What a principal may do on a join (fixed for the connection's life). */
  rights(p: Principal): JoinRights;
}

/**
 * - `opening`: its session is being loaded; the frames that arrive meanwhile wait for it.
 * - `open`: the session is loaded; the connection has not joined it (or has left it).
 * - `joined`: the connection is a member of the session.
 * - `ended`: the socket closed, or was closed: nothing more is handled.
 */
type Phase =
  | { state: 'opening' }
  | { state: 'open'; session: LiveSession }
  | { state: 'joined'; session: LiveSession; member: Member }
  | { state: 'ended' };

export class Attachment {
  readonly clientId: string;
  private phase: Phase = { state: 'opening' };
  private chain: Promise<void>;
  private readonly endListeners: Array<() => void> = [];
  private serviceParameters: Record<string, unknown> | undefined;
  private logger: Logger;
  private readonly frameRate: FrameRateLimiter;
  private readonly keyframes: KeyframePacer;
  private readonly handlers: Record<string, Handler>;

  constructor(
    private readonly hub: AttachmentHost,
    private readonly sessionId: string,
    private readonly conn: ClientConnection,
    private readonly principal: Principal,
    private readonly baseLogger: Logger,
  ) {
    this.clientId = uuidv7(hub.deps.clock.now());
    this.logger = baseLogger.child({ client_id: this.clientId });
    this.frameRate = new FrameRateLimiter(hub.deps.config.frameRate, hub.deps.clock.now());
    this.keyframes = new KeyframePacer(hub.deps.clock);
    this.handlers = clientOps({
      keyframes: this.keyframes,
      resizes: new ResizeCoalescer(hub.deps.clock),
      requireMember: () => this.requireMember(),
      join: (s, f) => this.join(s, f),
      leave: (s, f) => this.leave(s, f),
      useServiceParameters: (params) => this.useServiceParameters(params),
      later: (send, requestId) => {
        if (!this.ended) this.enqueue(send, requestId);
      },
      send: (op, id, payload, sequence) => this.send(op, id, payload, sequence),
      now: () => this.hub.deps.clock.now(),
    });
    this.chain = this.open();
  }

  onEnded(listener: () => void): void {
    this.endListeners.push(listener);
  }

  onText(text: string): void {
    if (!this.admitFrame()) return;
    const decoded = decodeClientFrame(text);
    if (!decoded.ok) {
      this.enqueue(() => this.sendError(decoded.id, decoded.error));
      return;
    }
    this.enqueue(() => this.handle(decoded.frame));
  }

  onBinary(bytes: Uint8Array): void {
    if (!this.admitFrame()) return;
    const data = decodeInputFrame(bytes);
    this.enqueue(() => {
      if (!this.conn.binary) throw new BindingError('INVALID_REQUEST', 'binary frames need the pty-ws.v1.binary subprotocol');
      if (!data) throw new BindingError('INVALID_REQUEST', 'binary frame without the PW1I magic');
      this.liveSession().input(this.requireMember(), data);
    });
  }

  /** The socket closed: release the role and membership. */
  onClose(): void {
    const p = this.phase;
    if (p.state === 'ended') return;
    this.phase = { state: 'ended' };
    if (p.state === 'joined') p.session.detach(p.member);
    for (const l of this.endListeners) l();
  }

  /** Ends the connection from outside (e.g. its credential expired): a final Error, then its close code. */
  end(err: BindingError): void {
    if (!this.ended) this.fatal(null, err);
  }

  goodbye(reason: string): void {
    if (this.ended) return;
    this.tell({ kind: 'Goodbye', reason, sequence: this.session?.currentSequence ?? 0 });
    this.conn.close(CLOSE.goodbye, reason);
    this.onClose();
  }

  private async open(): Promise<void> {
    const s = await this.hub.live(this.sessionId);
    if (!s) {
      this.fatal(null, new BindingError('INVALID_REQUEST', `session ${this.sessionId} not found`, { fatal: true, closeCode: CLOSE.sessionGone }));
      return;
    }
    // The socket may have closed while the session was loading.
    if (this.phase.state !== 'opening') return;
    this.phase = { state: 'open', session: s };
    const payload = hello({
      supportedOperations: this.hub.supportedOperations(),
      sessionId: this.sessionId,
      currentSequence: s.currentSequence,
      sessionHost: helloSessionHost(this.hub.deps.sessionHost),
      binary: this.conn.binary,
    });
    this.send('binding_hello', uuidv7(this.hub.deps.clock.now()), payload, s.currentSequence);
  }

  /** `requestId`: the request a failure of `task` answers. */
  private enqueue(task: () => Promise<void> | void, requestId: string | null = null): void {
    this.chain = this.chain.then(async () => {
      if (this.ended) return;
      try {
        await task();
      } catch (e) {
        this.fail(requestId, e);
      }
    });
  }

  private async handle(f: ClientEnvelope): Promise<void> {
    try {
      if (f.service_parameters && !this.serviceParameters) this.useServiceParameters(f.service_parameters);
      const handler = Object.hasOwn(this.handlers, f.op) ? this.handlers[f.op] : this.extraHandler(f.op);
      if (!handler) throw new BindingError('UNSUPPORTED_OPERATION', `operation "${f.op}" is not supported on this binding`, { metadata: { op: f.op } });
      const foreign = foreignSessionField(f.payload, this.sessionId);
      if (foreign) throw new BindingError('INVALID_REQUEST', `${foreign} names another session: this connection's session is ${this.sessionId}`);
      await handler(this.liveSession(), f);
    } catch (e) {
      this.fail(f.id, e);
    }
  }

  /** The frame rate limit (src/hub/frame-rate.ts): answered at once, not behind the frames queued before. */
  private admitFrame(): boolean {
    if (this.ended) return false;
    const verdict = this.frameRate.take(this.hub.deps.clock.now());
    if (verdict === 'accept') return true;
    const err = rateLimitError(verdict, this.hub.deps.config.frameRate);
    if (err?.fatal) this.fatal(null, err);
    else if (err) this.sendError(null, err);
    return false;
  }

  /** Cached for the connection's life (docs/protocol.md §4.4); the trace id follows into every log line. */
  private useServiceParameters(params: Record<string, unknown>): void {
    this.serviceParameters = params;
    const traceId = params.trace_id ?? params.traceparent;
    this.logger = this.baseLogger.child(typeof traceId === 'string' ? { client_id: this.clientId, trace_id: traceId } : { client_id: this.clientId });
    if (this.member) this.member.audit = this.logger;
  }

  /** An operation registered from outside the hub (the A2A task ops), with this connection as its context. */
  private extraHandler(op: string): Handler | undefined {
    const ops = this.hub.deps.ops ?? {};
    const handler = Object.hasOwn(ops, op) ? ops[op] : undefined;
    return handler && ((session, frame) => handler(opContext(this.opConnection, session, frame)));
  }

  private readonly opConnection: OpConnection = {
    principal: () => this.principal,
    clientId: () => this.clientId,
    serviceParameters: () => this.serviceParameters,
    send: (op, id, payload, sequence) => this.send(op, id, payload, sequence),
    sendLog: (log) => (this.member ? this.member.sendLog(log) : this.conn.sendText(log.json)),
    onEnded: (listener) => this.onEnded(listener),
  };

  private async join(s: LiveSession, f: ClientEnvelope): Promise<void> {
    if (this.member) throw new BindingError('INVALID_REQUEST', 'this connection has already joined the session');
    const req = parsePayload(P.JoinSession, f);
    const member = new Member(this.conn, this.clientId, req.client_label ?? this.principal.presenceLabel, this.hub.rights(this.principal), this.hub.deps.clock, this.hub.deps.config.lag, (m) => {
      recoverLagged(s, m).catch((e: unknown) => this.fail(null, e));
    });
    member.audit = this.logger;
    // A replay under way stops reading for a socket that closed.
    this.onEnded(() => member.disconnected());
    await s.join(member, req, f.replay_from, f.id);
    // The socket may have closed while the join was in flight: release what it just took.
    if (this.phase.state === 'ended') s.detach(member);
    else this.phase = { state: 'joined', session: s, member };
  }

  private leave(s: LiveSession, f: ClientEnvelope): void {
    parsePayload(P.Empty, f);
    const m = this.requireMember();
    s.leave(m);
    this.phase = { state: 'open', session: s };
    this.goodbye('leave_session');
  }

  private get ended(): boolean {
    return this.phase.state === 'ended';
  }

  private get session(): LiveSession | null {
    return this.phase.state === 'open' || this.phase.state === 'joined' ? this.phase.session : null;
  }

  private get member(): Member | null {
    return this.phase.state === 'joined' ? this.phase.member : null;
  }

  private liveSession(): LiveSession {
    const s = this.session;
    if (!s) throw new BindingError('INTERNAL', 'session not loaded');
    return s;
  }

  private requireMember(): Member {
    if (!this.member) throw new BindingError('INVALID_REQUEST', 'join the session first (pty.join_session)');
    return this.member;
  }

  private fail(id: string | null, e: unknown): void {
    if (e instanceof PtyError) {
      const sequence = this.member?.lastSequence ?? this.session?.currentSequence ?? 0;
      this.tell({ kind: 'PtyError', error: e, sequence, id: id ?? undefined });
      return;
    }
    const err = toBindingError(e);
    if (err.code === 'INTERNAL') this.logger.log('error', 'frame handler failed', { error: e });
    if (err.fatal) this.fatal(id, err);
    else this.sendError(id, err);
  }

  private sendError(id: string | null, err: BindingError): void {
    this.send('Error', id ?? uuidv7(this.hub.deps.clock.now()), errorPayload(err), this.session?.currentSequence ?? 0);
  }

  private fatal(id: string | null, err: BindingError): void {
    this.sendError(id, err);
    this.conn.close(err.closeCode, err.code);
    this.onClose();
  }

  private send<Op extends string>(op: Op, id: string, payload: PayloadOf<Op>, sequence: number): void {
    this.conn.sendText(JSON.stringify(serverFrame(op, payload, sequence, this.hub.deps.clock.now(), id)));
  }

  private tell(frame: Unicast): void {
    this.conn.sendText(encodeUnicast(frame, this.hub.deps.clock.now()));
  }
}
