// The client library's frame handling, unit by unit: a fake socket fed with frames built by the
// server's own encoders, so the client is checked against exactly what the server sends.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { attachProtocols, decodeText } from '../../src/client/frames.ts';
import { backoffDelay, isFinalClose } from '../../src/client/link.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import { ReplayCursor } from '../../src/client/replay-cursor.ts';
import type { PtyClientOptions } from '../../src/client/types.ts';
import type { WebSocketLike } from '../../src/client/websocket.ts';
import { encodeOutputFrame } from '../../src/protocol/binary.ts';
import { PTY_FRAME_OP, serverFrame } from '../../src/protocol/frames.ts';
import type { PtyFrameKind } from '../../src/protocol/server-payloads.ts';
import { negotiate } from '../../src/protocol/subprotocol.ts';
import { ClientProbe } from '../helpers/probe.ts';

class FakeSocket implements WebSocketLike {
  binaryType = 'blob';
  readyState = 0;
  protocol = '';
  readonly sent: Array<string | Uint8Array> = [];
  closedWith: number | null = null;
  onopen: WebSocketLike['onopen'] = null;
  onmessage: WebSocketLike['onmessage'] = null;
  onclose: WebSocketLike['onclose'] = null;
  onerror: WebSocketLike['onerror'] = null;

  constructor(
    readonly url: string,
    readonly protocols: string[],
  ) {}

  send(d: string | Uint8Array): void {
    this.sent.push(d);
  }

  close(code = 1000): void {
    this.closedWith = code;
    this.readyState = 3;
  }

  accept(currentSequence = 0): void {
    this.readyState = 1;
    this.onopen?.({});
    this.json('binding_hello', { binding_uri: 'b', binding_version: '1.0.0', supported_operations: [], activated_extensions: ['e'], session: { session_id: 's', current_sequence: currentSequence } }, currentSequence);
  }

  json(op: string, payload: unknown, sequence: number, id?: string): void {
    this.onmessage?.({ data: JSON.stringify(serverFrame(op, payload, sequence, Date.now(), id)) });
  }

  pty(kind: PtyFrameKind, fields: Record<string, unknown>, sequence: number, id?: string): void {
    this.json(PTY_FRAME_OP, { kind, ...fields }, sequence, id);
  }

  output(text: string, sequence: number, binary = false): void {
    const bytes = new TextEncoder().encode(text);
    if (binary) this.onmessage?.({ data: encodeOutputFrame(sequence, bytes).slice().buffer });
    else this.pty('Output', { stream: 'stdout', data: Buffer.from(bytes).toString('base64') }, sequence);
  }

  keyframe(screen: string, anchor: number, sequence: number, id?: string): void {
    this.pty('Keyframe', { snapshot: Buffer.from(screen).toString('base64'), snapshot_format: 'vt100-screen-state-v1', snapshot_cols: 80, snapshot_rows: 24, anchor_sequence: anchor }, sequence, id);
  }

  drop(code = 1006): void {
    this.readyState = 3;
    this.onclose?.({ code, reason: '' });
  }

  /** The JSON frames this client sent. */
  requests(): Array<{ op: string; id: string; payload: Record<string, unknown>; replay_from?: number; extensions?: string[] }> {
    return this.sent.filter((s): s is string => typeof s === 'string').map((s) => JSON.parse(s));
  }

  last(op: string) {
    const r = this.requests().filter((f) => f.op === op).at(-1);
    if (!r) throw new Error(`no ${op} sent; sent ${JSON.stringify(this.requests().map((f) => f.op))}`);
    return r;
  }
}

let sockets: FakeSocket[];
const make = (opts: Partial<PtyClientOptions> = {}) => {
  const client = new PtyClient({
    url: 'ws://h/agents/local/sessions/s/attach',
    webSocket: (url, protocols) => {
      const s = new FakeSocket(url, protocols);
      sockets.push(s);
      return s;
    },
    keepalive: false,
    ...opts,
  });
  return { client, probe: new ClientProbe(client) };
};
const sock = (i = -1) => sockets.at(i)!;

/** Hello, join, RoleAssigned, MembershipChanged at `mc`, the join Keyframe. */
async function joinFlow(s: FakeSocket, mc: number, anchor: number, screen = 'screen'): Promise<void> {
  s.accept(mc - 1);
  const join = s.last('pty.join_session');
  s.pty('RoleAssigned', { role: 'controller', client_id: 'me' }, mc - 1, join.id);
  s.pty('MembershipChanged', { controllers: [{ client_id: 'me', label: 'l' }], observers: [] }, mc);
  s.keyframe(screen, anchor, mc, join.id);
  await Promise.resolve();
}

beforeEach(() => {
  sockets = [];
});
afterEach(() => {
  vi.useRealTimers();
});

describe('ReplayCursor', () => {
  it('tracks the highest log frame, drops duplicates and Output a Keyframe already holds', () => {
    const c = new ReplayCursor();
    expect(c.replayFrom()).toBeUndefined();
    expect(c.needsRepaint).toBe(true);
    expect(c.logFrame(1, false)).toBe(true);
    expect(c.keyframe(1, 0)).toBe(true);
    expect(c.needsRepaint).toBe(false);
    expect(c.logFrame(2, true)).toBe(true);
    expect(c.logFrame(2, true)).toBe(false);
    expect(c.keyframe(5, 4)).toBe(false);
    expect(c.logFrame(4, true)).toBe(false);
    expect(c.logFrame(6, true)).toBe(true);
    expect(c.replayFrom()).toBe(6);
    c.lost();
    expect(c.keyframe(6, 6)).toBe(true);
  });

  it('starts numbering over when REPLAY_OUT_OF_RANGE says the server is behind the cursor', () => {
    const c = new ReplayCursor();
    c.logFrame(50, true);
    c.outOfRange(60);
    expect(c.position).toBe(50);
    c.outOfRange(3);
    expect(c.position).toBe(0);
    expect(c.logFrame(3, false)).toBe(true);
    expect(c.needsRepaint).toBe(true);
  });
});

describe('link policy', () => {
  it('backs off from min to max with jitter, and stops after maxAttempts', () => {
    const opts = { minDelayMs: 100, maxDelayMs: 1000, maxAttempts: 5 };
    const delays = [1, 2, 3, 4, 5].map((a) => backoffDelay(a, opts)!);
    [100, 200, 400, 800, 1000].forEach((base, i) => {
      expect(delays[i]).toBeGreaterThanOrEqual(base * 0.75);
      expect(delays[i]).toBeLessThanOrEqual(base * 1.25);
    });
    expect(backoffDelay(6, opts)).toBeNull();
    expect(backoffDelay(1, false)).toBeNull();
  });

  it('treats auth, protocol, unknown-session and capacity closes and upgrade refusals as final', () => {
    for (const code of [4400, 4401, 4403, 4404, 4429, 1009]) expect(isFinalClose(code, undefined)).toBe(true);
    for (const code of [1000, 1001, 1006, 1011]) expect(isFinalClose(code, undefined)).toBe(false);
    expect(isFinalClose(1006, 'Unexpected server response: 404')).toBe(true);
    expect(isFinalClose(1006, 'Unexpected server response: 429')).toBe(false);
  });
});

describe('frames', () => {
  it('offers the PTY subprotocol and the bearer entry the server decodes back to the token', () => {
    const token = 'tök+/=en';
    const protocols = attachProtocols(true, token);
    expect(protocols[0]).toBe('pty-ws.v1.binary');
    expect(protocols[1]).toMatch(/^bearer\.[A-Za-z0-9_-]+$/);
    expect(negotiate(protocols.join(', '), true)).toEqual({ selected: 'pty-ws.v1.binary', binary: true, bearer: token });
    expect(attachProtocols(false, null)).toEqual(['pty-ws.v1']);
  });

  it('reads malformed server frames as invalid, naming the problem', () => {
    expect(decodeText('nope')).toEqual({ type: 'invalid', reason: 'text frame is not JSON' });
    const bad = decodeText(JSON.stringify(serverFrame<string>(PTY_FRAME_OP, { kind: 'Resize', cols: 'wide' }, 1, 0)));
    expect(bad.type).toBe('invalid');
    expect(JSON.stringify(bad)).toContain('cols');
  });
});

describe('PtyClient', () => {
  it('joins with role, label, geometry and the extension, and resolves once the join Keyframe arrives', async () => {
    const { client, probe } = make({ token: 't', role: 'observer', label: 'me', size: { cols: 90, rows: 20 } });
    const joined = client.connect();
    expect(sock().protocols).toEqual(['pty-ws.v1.binary', expect.stringMatching(/^bearer\./)]);
    await joinFlow(sock(), 1, 0, 'hello screen');
    await joined;
    const join = sock().last('pty.join_session');
    expect(join.payload).toEqual({ role: 'observer', client_label: 'me', cols: 90, rows: 20 });
    expect(join.extensions).toEqual(['https://agentic-sandbox.aiwg.io/extensions/pty-extensions/v1']);
    expect(join.replay_from).toBeUndefined();
    expect(client.state).toBe('live');
    expect(client.role).toBe('controller');
    expect(client.membership.controllers).toEqual([{ client_id: 'me', label: 'l' }]);
    expect(probe.keyframes[0]).toMatchObject({ repaint: true, cols: 80, rows: 24, anchor: 0 });
    expect(await probe.screen()).toBe('hello screen');
  });

  it('replays from the given sequence on the first join, and from its cursor after that', async () => {
    vi.useFakeTimers();
    const { client } = make({ replayFrom: 0 });
    void client.connect();
    await joinFlow(sock(), 3, 2);
    expect(sock().last('pty.join_session').replay_from).toBe(0);
    sock().drop();
    await vi.advanceTimersByTimeAsync(400);
    sock().accept(3);
    expect(sock().last('pty.join_session').replay_from).toBe(3);
  });

  it('caps only the first join\'s scrollback replay by bytes: a rejoin replays all it missed', async () => {
    vi.useFakeTimers();
    const { client } = make({ scrollbackFrames: 1000, scrollbackBytes: 4096 });
    void client.connect();
    await joinFlow(sock(), 8, 6);
    const first = sock().last('pty.join_session');
    expect(first.replay_from).toBe(0);
    expect(first.payload.replay_max_bytes).toBe(4096);
    sock().drop();
    await vi.advanceTimersByTimeAsync(400);
    sock().accept(9);
    const again = sock().last('pty.join_session');
    expect(again.replay_from).toBe(8);
    expect(again.payload.replay_max_bytes).toBeUndefined();
  });

  it('surfaces JSON and PW1O output once each, in order, and skips Output a Keyframe already painted', async () => {
    const { client, probe } = make();
    void client.connect();
    await joinFlow(sock(), 1, 0);
    const s = sock();
    s.output('a', 2);
    s.output('b', 3, true);
    s.output('b', 3, true);
    s.keyframe('ab', 3, 4);
    s.output('c', 5, true);
    s.pty('Resize', { cols: 100, rows: 40 }, 6);
    expect(probe.output()).toBe('abc');
    expect(probe.keyframes.at(-1)!.repaint).toBe(false);
    expect(client.geometry).toEqual({ cols: 100, rows: 40 });
    expect(client.cursor.position).toBe(6);
  });

  it('sends input as PW1I under binary and as base64 pty.session_input under JSON', async () => {
    const bin = make();
    void bin.client.connect();
    await joinFlow(sock(), 1, 0);
    bin.client.send('ls\r');
    expect(Buffer.from(sock().sent.at(-1) as Uint8Array).toString()).toBe('PW1Ils\r');

    const json = make({ binary: false });
    void json.client.connect();
    expect(sock().protocols).toEqual(['pty-ws.v1']);
    await joinFlow(sock(), 1, 0);
    json.client.send(new Uint8Array([0x03]));
    expect(sock().last('pty.session_input').payload).toEqual({ data: 'Aw==' });
    json.client.resize(50, 10);
    expect(sock().last('pty.session_resize').payload).toEqual({ cols: 50, rows: 10 });
  });

  it('reconnects after a drop with replay_from, keeps the screen, and sends what was typed meanwhile', async () => {
    vi.useFakeTimers();
    const { client, probe } = make();
    void client.connect();
    await joinFlow(sock(), 1, 0);
    sock().output('one\r\n', 2);
    sock().drop();
    expect(client.state).toBe('reconnecting');
    client.send('typed-while-down');
    client.resize(70, 20);
    await vi.advanceTimersByTimeAsync(400);
    expect(sockets).toHaveLength(2);

    const s = sock();
    s.accept(4);
    const join = s.last('pty.join_session');
    expect(join.replay_from).toBe(2);
    s.pty('RoleAssigned', { role: 'controller', client_id: 'me2' }, 4, join.id);
    s.output('two\r\n', 3);
    s.pty('MembershipChanged', { controllers: [{ client_id: 'me2' }], observers: [] }, 4);
    s.output('two\r\n', 3);
    s.keyframe('one\r\ntwo', 3, 4, join.id);
    expect(client.state).toBe('live');
    expect(probe.keyframes.at(-1)!.repaint).toBe(false);
    expect(probe.output()).toBe('one\r\ntwo\r\n');
    expect(s.last('pty.session_resize').payload).toEqual({ cols: 70, rows: 20 });
    expect(Buffer.from(s.sent.at(-1) as Uint8Array).toString()).toBe('PW1Ityped-while-down');
  });

  it('repaints from the Keyframe after REPLAY_OUT_OF_RANGE and after PTY_OUTPUT_LAGGED', async () => {
    const { client, probe } = make({ reconnect: { minDelayMs: 1, maxDelayMs: 1 } });
    void client.connect();
    await joinFlow(sock(), 1, 0);
    sock().drop();
    await probe.waitFor(() => sockets.length === 2, 'a second connection');
    const s = sock();
    s.accept(900);
    const join = s.last('pty.join_session');
    s.json('Error', { code: 'REPLAY_OUT_OF_RANGE', message: 'gone', retryable: false, oldest_retained_sequence: 500, current_sequence: 901 }, 901, join.id);
    s.pty('MembershipChanged', { controllers: [], observers: [] }, 901);
    s.keyframe('fresh', 899, 901, join.id);
    expect(probe.keyframes.at(-1)!.repaint).toBe(true);
    expect(client.state).toBe('live');
    expect(await probe.screen()).toBe('fresh');

    s.pty('Error', { code: 'PTY_OUTPUT_LAGGED', message: 'behind' }, 901);
    s.keyframe('caught up', 950, 901);
    s.output('dropped', 950, true);
    s.output('!', 951, true);
    expect(probe.keyframes.at(-1)!.repaint).toBe(true);
    expect(await probe.screen()).toBe('caught up!');
    expect(probe.errors.map((e) => e.code)).toEqual(['REPLAY_OUT_OF_RANGE', 'PTY_OUTPUT_LAGGED']);
  });

  it('ends with the exit code when the session closes, and never reconnects', async () => {
    vi.useFakeTimers();
    const { client } = make();
    void client.connect();
    await joinFlow(sock(), 1, 0);
    sock().pty('Closed', { exit_code: 3, reason: 'normal' }, 2);
    sock().json('binding_goodbye', { reason: 'session_closed' }, 2);
    sock().drop(1000);
    const end = await client.whenEnded();
    expect(end).toEqual({ reason: 'session_closed', closed: { exitCode: 3, reason: 'normal' } });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sockets).toHaveLength(1);
  });

  it('gives up at once on a final close code or a failed first connection', async () => {
    const refused = make();
    const first = refused.client.connect();
    sock().onerror?.({ message: 'Unexpected server response: 401' });
    sock().drop(1006);
    await expect(first).rejects.toThrow('401');
    expect(refused.probe.end).toMatchObject({ reason: 'refused' });

    vi.useFakeTimers();
    const kicked = make();
    void kicked.client.connect();
    await joinFlow(sock(), 1, 0);
    sock().drop(4403);
    expect(kicked.probe.end).toMatchObject({ reason: 'refused', closeCode: 4403 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sockets).toHaveLength(2);
  });

  it('treats a silent link as dead: no frame within the keepalive timeout means reconnect', async () => {
    vi.useFakeTimers();
    const { client } = make({ keepalive: { intervalMs: 1000, timeoutMs: 500 } });
    void client.connect();
    await joinFlow(sock(), 1, 0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(sock().last('ping').payload).toHaveProperty('client_ts');
    sock().json('pong', { client_ts: null, server_ts: new Date().toISOString() }, 1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(client.state).toBe('live');
    await vi.advanceTimersByTimeAsync(600);
    expect(client.state).toBe('reconnecting');
    expect(sockets[0]!.closedWith).toBe(4000);
  });

  it('a failed join is final: the error is surfaced and connect() rejects', async () => {
    const { client, probe } = make();
    const joined = client.connect();
    sock().accept();
    const join = sock().last('pty.join_session');
    sock().json('Error', { code: 'INVALID_REQUEST', message: "could not start the session's process: no such program", retryable: false }, 0, join.id);
    await expect(joined).rejects.toThrow('no such program');
    expect(probe.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', source: 'binding', requestId: join.id });
    expect(sock().closedWith).toBe(1000);
  });
});
