// The extension's conformance scenarios (docs/protocol.md §5, §6), against the real server and a real shell.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64, TestClient, type Frame } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer(
    {
      PTY_WS_MAX_CONTROLLERS: '2',
      PTY_WS_MAX_OBSERVERS: '3',
      PTY_WS_KEYFRAME_INTERVAL_FRAMES: '20',
      PTY_WS_KEYFRAME_INTERVAL_SECONDS: '1',
    },
    {},
    // A lower slow-consumer threshold than the product's 16 MiB keeps the lag test's output small.
    { overrides: { lag: { highBytes: 4 * 1024 * 1024, lowBytes: 256 * 1024, pollMs: 50 } }, belowSpecRetention: { frames: 40, seconds: 1 } },
  );
  token = server.devToken!;
});
afterAll(async () => {
  await server?.stop();
});

const session = async (body: Record<string, unknown> = {}): Promise<string> => (await server.createSession(body)).attach_url;

const ptyKinds = (frames: Frame[]) => frames.filter((f) => f.op === 'pty.session_frame').map((f) => f.payload.kind);

describe('pty-extensions/v1 conformance (§7)', () => {
  it('1. single controller: join, input, output, resize, leave in order', async () => {
    const c = await TestClient.connect(await session(), { token });
    const frames = await c.join({ role: 'controller', cols: 90, rows: 25 });
    expect(ptyKinds(frames)).toEqual(['RoleAssigned', 'MembershipChanged', 'Keyframe']);
    c.send('pty.session_input', { data: b64('echo one-$((1))\r') });
    await c.waitForOutput('one-1');
    c.send('pty.session_resize', { cols: 100, rows: 20 });
    await c.waitForFrame((f) => f.payload.kind === 'Resize' && f.payload.cols === 100, 'Resize');
    const leaveId = c.send('pty.leave_session');
    await c.waitForClose();
    const tail = c.frames().slice(-2);
    expect(tail[0]).toMatchObject({ op: 'pty.session_frame', payload: { kind: 'MembershipChanged', controllers: [], observers: [] } });
    expect(tail[1]).toMatchObject({ op: 'binding_goodbye', payload: { reason: 'leave_session' } });
    expect(c.closed?.code).toBe(1000);
    expect(leaveId).toBeTruthy();
  });

  it('2. observer input and resize are rejected with PERMISSION_DENIED and the connection stays', async () => {
    const url = await session();
    const ctl = await TestClient.connect(url, { token });
    await ctl.join({ role: 'controller' });
    const obs = await TestClient.connect(url, { token });
    const frames = await obs.join({ role: 'observer' });
    expect(frames.find((f) => f.payload.kind === 'RoleAssigned')?.payload.role).toBe('observer');
    const id = obs.send('pty.session_input', { data: b64('echo no\r') });
    const err = await obs.waitForFrame((f) => f.op === 'Error' && f.id === id, 'denied');
    expect(err.payload).toMatchObject({ code: 'PERMISSION_DENIED', a2a_error: { data: [{ reason: 'PERMISSION_DENIED' }] } });
    ctl.send('pty.session_input', { data: b64('echo still-there\r') });
    await obs.waitForOutput('still-there');
    expect(obs.closed).toBeNull();
  });

  it('3. the (max_controllers+1)-th controller is downgraded with an explicit RoleAssigned; request_role both ways', async () => {
    const url = await session();
    const a = await TestClient.connect(url, { token });
    const b = await TestClient.connect(url, { token });
    const c = await TestClient.connect(url, { token });
    await a.join({ role: 'controller' });
    await b.join({ role: 'controller' });
    const third = await c.join({ role: 'controller' });
    expect(third.find((f) => f.payload.kind === 'RoleAssigned')?.payload).toMatchObject({ role: 'observer', downgraded: true });
    expect(String(third.find((f) => f.payload.kind === 'RoleAssigned')?.payload.reason)).toMatch(/max_controllers/);

    const down = b.send('pty.request_role', { role: 'observer' });
    expect((await b.waitForFrame((f) => f.id === down && f.payload.kind === 'RoleAssigned', 'b observer')).payload.role).toBe('observer');
    const up = c.send('pty.request_role', { role: 'controller' });
    expect((await c.waitForFrame((f) => f.id === up && f.payload.kind === 'RoleAssigned', 'c controller')).payload).toMatchObject({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo promoted\r') });
    await a.waitForOutput('promoted');
  });

  it('3b. an observer beyond max_observers is refused with RATE_LIMITED and close 4429', async () => {
    const url = await session();
    const ctl = await TestClient.connect(url, { token });
    await ctl.join({ role: 'controller' });
    for (let i = 0; i < 3; i++) await (await TestClient.connect(url, { token })).join({ role: 'observer' });
    const extra = await TestClient.connect(url, { token });
    const id = extra.send('pty.join_session', { role: 'observer' });
    const err = await extra.waitForFrame((f) => f.op === 'Error' && f.id === id, 'rate limited');
    expect(err.payload.code).toBe('RATE_LIMITED');
    expect((await extra.waitForClose()).code).toBe(4429);
  });

  it('4. every join, leave and disconnect produces MembershipChanged to all attached clients', async () => {
    const url = await session();
    const a = await TestClient.connect(url, { token });
    const aJoin = await a.join({ role: 'controller', client_label: 'alice' });
    const aId = aJoin.find((f) => f.payload.kind === 'RoleAssigned')!.payload.client_id;
    const b = await TestClient.connect(url, { token });
    const bJoin = await b.join({ role: 'observer', client_label: 'bob' });
    const bId = bJoin.find((f) => f.payload.kind === 'RoleAssigned')!.payload.client_id;
    const m1 = await a.waitForFrame((f) => f.payload.kind === 'MembershipChanged' && (f.payload.observers as unknown[]).length === 1, 'a sees b join');
    expect(m1.payload).toMatchObject({ controllers: [{ client_id: aId, label: 'alice' }], observers: [{ client_id: bId, label: 'bob' }] });
    const c = await TestClient.connect(url, { token });
    await c.join({ role: 'observer' });
    await b.waitForFrame((f) => f.payload.kind === 'MembershipChanged' && (f.payload.observers as unknown[]).length === 2, 'b sees c join');
    c.ws.terminate();
    await a.waitForFrame((f) => f.payload.kind === 'MembershipChanged' && (f.payload.observers as unknown[]).length === 1 && f.sequence > m1.sequence + 1, 'a sees c disconnect');
    b.send('pty.leave_session');
    await a.waitForFrame((f) => f.payload.kind === 'MembershipChanged' && (f.payload.observers as unknown[]).length === 0, 'a sees b leave');
  });

  it('5. a mid-session observer gets RoleAssigned, MembershipChanged, a Keyframe of the current screen, then live frames', async () => {
    const url = await session();
    const a = await TestClient.connect(url, { token });
    await a.join({ role: 'controller' });
    a.send('pty.session_input', { data: b64('echo before-$((2*3))\r') });
    await a.waitForOutput('before-6');
    const b = await TestClient.connect(url, { token });
    const frames = await b.join({ role: 'observer' });
    expect(ptyKinds(frames)).toEqual(['RoleAssigned', 'MembershipChanged', 'Keyframe']);
    const key = frames.find((f) => f.payload.kind === 'Keyframe')!;
    expect(key.payload).toMatchObject({ snapshot_format: 'vt100-screen-state-v1', snapshot_cols: 120, snapshot_rows: 30 });
    expect(key.payload.anchor_sequence).toBeGreaterThan(0);
    expect(b.screen()).toContain('before-6');
    a.send('pty.session_input', { data: b64('echo after-$((3*3))\r') });
    await b.waitForOutput('after-9');
    const firstLive = b.frames().find((f) => f.payload.kind === 'Output')!;
    expect(firstLive.sequence).toBeGreaterThan(Number(key.payload.anchor_sequence));
  });

  it('6. replay within the window: the missed frames in order, then a Keyframe, then live', async () => {
    const url = await session();
    const a = await TestClient.connect(url, { token });
    await a.join({ role: 'controller' });
    a.send('pty.session_input', { data: b64('echo first\r') });
    await a.waitForOutput('first');
    const cursor = Math.max(...a.frames().filter((f) => f.payload.kind === 'Output' || f.payload.kind === 'MembershipChanged').map((f) => f.sequence));
    a.ws.terminate();

    const keeper = await TestClient.connect(url, { token });
    await keeper.join({ role: 'controller' });
    keeper.send('pty.session_input', { data: b64('echo missed-$((5+5))\r') });
    await keeper.waitForOutput('missed-10');

    const back = await TestClient.connect(url, { token });
    const again = await TestClient.connect(url, { token });
    const flush = await back.join({ role: 'observer' }, { replay_from: cursor });
    await again.join({ role: 'observer' }, { replay_from: cursor });
    const replayed = flush.filter((f) => f.op === 'pty.session_frame' && f.payload.kind !== 'RoleAssigned');
    const seqs = replayed.filter((f) => f.payload.kind !== 'Keyframe').map((f) => f.sequence);
    expect(seqs[0]).toBe(cursor + 1);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => cursor + 1 + i));
    expect(replayed.at(-1)!.payload.kind).toBe('Keyframe');
    expect(back.output()).toContain('missed-10');
    // Two clients replaying from the same cursor get identical log frames.
    const ids = (c: TestClient) => c.frames().filter((f) => f.sequence > cursor && f.op === 'pty.session_frame' && !['RoleAssigned', 'Keyframe'].includes(String(f.payload.kind))).map((f) => f.id);
    expect(ids(again).slice(0, ids(back).length - 1)).toEqual(ids(back).slice(0, -1));
    keeper.send('pty.session_input', { data: b64('echo live-after-replay\r') });
    await back.waitForOutput('live-after-replay');
  });

  it('7. replay out of range: REPLAY_OUT_OF_RANGE, then a Keyframe, then live', async () => {
    const url = await session();
    const a = await TestClient.connect(url, { token });
    await a.join({ role: 'controller' });
    a.send('pty.session_input', { data: b64('for i in $(seq 1 60); do echo old-$i; sleep 0.01; done\r') });
    await a.waitForOutput('old-60');
    await new Promise((r) => setTimeout(r, 1200));
    a.send('pty.session_input', { data: b64('for i in $(seq 1 60); do echo new-$i; sleep 0.01; done\r') });
    await a.waitForOutput('new-60');
    await new Promise((r) => setTimeout(r, 300));

    const late = await TestClient.connect(url, { token });
    const id = late.send('pty.join_session', { role: 'observer' }, { replay_from: 1 });
    const err = await late.waitForFrame((f) => f.op === 'Error' && f.id === id, 'out of range');
    expect(err.payload).toMatchObject({ code: 'REPLAY_OUT_OF_RANGE', a2a_error: { data: [{ reason: 'REPLAY_OUT_OF_RANGE' }] } });
    expect(Number(err.payload.oldest_retained_sequence)).toBeGreaterThan(2);
    await late.waitForFrame((f) => f.id === id && f.payload.kind === 'Keyframe', 'keyframe after the error');
    const order = late.frames().map((f) => f.op === 'Error' ? 'Error' : f.payload.kind ?? f.op);
    expect(order.indexOf('Error')).toBeLessThan(order.lastIndexOf('Keyframe'));
    a.send('pty.session_input', { data: b64('echo live-again\r') });
    await late.waitForOutput('live-again');

    const future = await TestClient.connect(url, { token });
    const fid = future.send('pty.join_session', { role: 'observer' }, { replay_from: 1_000_000 });
    expect((await future.waitForFrame((f) => f.op === 'Error' && f.id === fid, 'future cursor')).payload.code).toBe('REPLAY_OUT_OF_RANGE');
  });

  it('8. keyframe cadence: at most keyframe_interval_frames Output frames between Keyframes', async () => {
    const url = await session();
    const a = await TestClient.connect(url, { token });
    await a.join({ role: 'controller' });
    a.send('pty.session_input', { data: b64('for i in $(seq 1 400); do echo cadence-$i; done; echo cadence-done\r') });
    await a.waitForOutput('cadence-done');
    await new Promise((r) => setTimeout(r, 1500));
    const joinKey = a.frames().find((f) => f.payload.kind === 'Keyframe')!;
    const after = a.frames().filter((f) => f.sequence > joinKey.sequence && (f.payload.kind === 'Output' || f.payload.kind === 'Keyframe'));
    let run = 0;
    let keyframes = 0;
    for (const f of after) {
      if (f.payload.kind === 'Keyframe') {
        keyframes++;
        expect(run).toBeLessThanOrEqual(20);
        expect(Number(f.payload.anchor_sequence)).toBeLessThan(f.sequence);
        run = 0;
      } else run++;
    }
    expect(run).toBe(0);
    expect(keyframes).toBeGreaterThan(0);
    // A periodic Keyframe reproduces the screen its anchor names.
    expect(Buffer.from(String(after.filter((f) => f.payload.kind === 'Keyframe').at(-1)!.payload.snapshot), 'base64').toString()).toContain('cadence-done');
  });

  it('8b. keyframe cadence: no more than keyframe_interval_seconds of output between Keyframes', async () => {
    const url = await session({ command: 'for i in $(seq 1 30); do echo tick-$i; sleep 0.1; done; sleep 5' });
    const a = await TestClient.connect(url, { token });
    await a.join({ role: 'controller' });
    await a.waitForOutput('tick-30', 15_000);
    await new Promise((r) => setTimeout(r, 1500));
    const frames = a.frames().filter((f) => f.payload.kind === 'Output' || (f.payload.kind === 'Keyframe' && f.op === 'pty.session_frame'));
    let firstOutputSince: number | null = null;
    let periodic = 0;
    for (const f of frames) {
      const t = Date.parse(f.ts);
      if (f.payload.kind === 'Keyframe') {
        if (firstOutputSince !== null) {
          periodic++;
          expect(t - firstOutputSince).toBeLessThanOrEqual(1000 + 500);
        }
        firstOutputSince = null;
      } else firstOutputSince ??= t;
    }
    expect(periodic).toBeGreaterThanOrEqual(2);
  });

  it('9. a controller resize reaches every attached client as Resize; the last write wins', async () => {
    const url = await session();
    const a = await TestClient.connect(url, { token });
    await a.join({ role: 'controller' });
    const b = await TestClient.connect(url, { token });
    await b.join({ role: 'controller' });
    const o = await TestClient.connect(url, { token });
    await o.join({ role: 'observer' });
    a.send('pty.session_resize', { cols: 70, rows: 20 });
    b.send('pty.session_resize', { cols: 71, rows: 21 });
    for (const c of [a, b, o]) {
      await c.waitFor(() => c.frames().filter((f) => f.payload.kind === 'Resize').length === 2, 'two resizes');
    }
    const last = o.frames().filter((f) => f.payload.kind === 'Resize').at(-1)!;
    a.send('pty.session_input', { data: b64('stty size\r') });
    await a.waitForOutput(`${last.payload.rows} ${last.payload.cols}`);
  });

  it('10. process exit: Closed with the exit code, then binding_goodbye on every connection', async () => {
    const url = await session({ command: 'read x; exit 3' });
    const a = await TestClient.connect(url, { token });
    await a.join({ role: 'controller' });
    const b = await TestClient.connect(url, { token });
    await b.join({ role: 'observer' });
    a.send('pty.session_input', { data: b64('go\r') });
    for (const c of [a, b]) {
      const closed = await c.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed');
      expect(closed.payload).toMatchObject({ exit_code: 3, reason: 'normal' });
      await c.waitForFrame((f) => f.op === 'binding_goodbye' && f.payload.reason === 'session_closed', 'goodbye');
      expect((await c.waitForClose()).code).toBe(1000);
    }
    // A closed session still serves replay to observers.
    const later = await TestClient.connect(url, { token });
    later.send('pty.join_session', { role: 'observer' }, { replay_from: 0 });
    await later.waitForClose();
    expect(later.frames().find((f) => f.payload.kind === 'Closed')?.payload.exit_code).toBe(3);
  });
});

describe('keyframes and slow consumers', () => {
  it('pty.request_keyframe answers with a Keyframe, at most one per second per connection', async () => {
    const url = await session();
    const a = await TestClient.connect(url, { token });
    await a.join({ role: 'controller' });
    const t0 = Date.now();
    const k1 = a.send('pty.request_keyframe');
    const k2 = a.send('pty.request_keyframe');
    const k3 = a.send('pty.request_keyframe');
    await a.waitForFrame((f) => f.id === k1 && f.payload.kind === 'Keyframe', 'k1');
    const second = await a.waitForFrame((f) => f.id === k2 && f.payload.kind === 'Keyframe', 'k2');
    expect(Date.parse(second.ts) - t0).toBeGreaterThanOrEqual(900);
    expect((await a.waitForFrame((f) => f.id === k3 && f.op === 'Error', 'k3 refused')).payload.code).toBe('RATE_LIMITED');
  });

  it('a client that stops reading is dropped behind, then gets PTY_OUTPUT_LAGGED and a Keyframe, while others get everything', async () => {
    const url = await session({ command: 'sleep 0.5; head -c 6000000 /dev/zero | od -v -An -tx1 | head -c 14000000; echo; echo lag-test-done; sleep 30' });
    const fast = await TestClient.connect(url, { token, protocols: ['pty-ws.v1.binary'] });
    await fast.join({ role: 'controller' });
    const slow = await TestClient.connect(url, { token });
    await slow.join({ role: 'observer' });
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    await fast.waitForOutput('lag-test-done', 30_000);
    const bytes = fast.received.reduce((n, r) => n + (r.type === 'binary' ? r.data.length - 13 : 0), 0);
    expect(bytes).toBeGreaterThanOrEqual(14_000_000);
    socket.resume();
    const lagged = await slow.waitForFrame((f) => f.payload.kind === 'Error' && f.payload.code === 'PTY_OUTPUT_LAGGED', 'lagged', 30_000);
    const frames = slow.frames();
    const next = frames[frames.indexOf(lagged) + 1] ?? (await slow.waitFor(() => slow.frames()[frames.indexOf(lagged) + 1], 'frame after lag'));
    expect(next.payload.kind).toBe('Keyframe');
    await slow.waitFor(() => slow.screen().includes('lag-test-done'), 'the repaint shows the end');
    const seqs = slow.frames().filter((f) => f.payload.kind === 'Output').map((f) => f.sequence);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
  }, 90_000);
});

describe('screen fidelity', () => {
  async function reproduce(command: string, settle: (c: TestClient) => Promise<void>) {
    const xterm = (await import('@xterm/headless')).default;
    const url = await session({ command, terminal_size: { cols: 80, rows: 24 } });
    const a = await TestClient.connect(url, { token });
    await a.join({ role: 'controller' }, { replay_from: 0 });
    await settle(a);
    await new Promise((r) => setTimeout(r, 500));
    const raw = Buffer.concat(a.received.flatMap((r) => (r.type === 'json' && r.frame.payload.kind === 'Output' ? [Buffer.from(String(r.frame.payload.data), 'base64')] : [])));
    const b = await TestClient.connect(url, { token });
    const frames = await b.join({ role: 'observer' });
    const key = frames.find((f) => f.payload.kind === 'Keyframe')!;
    const write = (t: InstanceType<typeof xterm.Terminal>, d: Uint8Array | string) => new Promise<void>((r) => t.write(d, r));
    const truth = new xterm.Terminal({ cols: 80, rows: 24, allowProposedApi: true });
    const copy = new xterm.Terminal({ cols: Number(key.payload.snapshot_cols), rows: Number(key.payload.snapshot_rows), allowProposedApi: true });
    await write(truth, raw);
    await write(copy, Buffer.from(String(key.payload.snapshot), 'base64'));
    const view = (t: InstanceType<typeof xterm.Terminal>) => {
      const buf = t.buffer.active;
      const rows: string[] = [];
      for (let y = 0; y < t.rows; y++) {
        const line = buf.getLine(buf.viewportY + y)!;
        let cells = '';
        for (let x = 0; x < t.cols; x++) {
          const cell = line.getCell(x)!;
          cells += `${cell.getChars() || ' '}${cell.getFgColor()}/${cell.getBgColor()}/${cell.isBold()}/${cell.isInverse()};`;
        }
        rows.push(cells);
      }
      return { type: buf.type, cursor: [buf.cursorX, buf.cursorY], rows };
    };
    return { truth: view(truth), copy: view(copy), text: b.screen(), a };
  }

  it('reproduces colours, attributes and the cursor of coloured output', async () => {
    const r = await reproduce(`printf '\\033[1;31mRED\\033[0m \\033[42;30mGREEN-BG\\033[0m \\033[7minverse\\033[0m\\n\\033[38;5;208morange\\033[0m\\n'; sleep 20`, (c) => c.waitForOutput('orange').then(() => undefined));
    expect(r.copy).toEqual(r.truth);
    expect(r.text).toContain('RED');
  });

  it('reproduces a full-screen program on the alternate screen (vi)', async () => {
    const r = await reproduce(`printf 'line one\\nline two\\n' > /tmp/pty-ws-vi-$$.txt; exec vi /tmp/pty-ws-vi-$$.txt`, (c) => c.waitForOutput('line two').then(() => undefined));
    expect(r.truth.type).toBe('alternate');
    expect(r.copy).toEqual(r.truth);
    r.a.send('pty.session_input', { data: b64(':q!\r') });
  });
});

