// GET …/recording.cast: asciicast v2 from the retained log, checked against what a real client received,
// plus the encoder alone on a hand-made log (paging, split UTF-8, a pruned log opening on a Keyframe).
import { afterEach, describe, expect, it } from 'vitest';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import { SessionsApi } from '../../src/client/sessions-api.ts';
import type { LogEntry } from '../../src/protocol/logged-frames.ts';
import type { SessionRecord, Store } from '../../src/ports/store.ts';
import { PTY_FRAME_OP, serverFrame } from '../../src/protocol/frames.ts';
import { asciicastChunks } from '../../src/recording/asciicast.ts';
import { ClientProbe } from '../helpers/probe.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

type Header = { version: number; width: number; height: number; timestamp: number; title?: string };
type Event = [number, string, string];

/** Parses an asciicast v2 file strictly: a header object, then [time, code, data] events with non-decreasing time. */
function parseCast(text: string): { header: Header; events: Event[] } {
  expect(text.endsWith('\n')).toBe(true);
  const [first, ...rest] = text.slice(0, -1).split('\n');
  const header = JSON.parse(first!) as Header;
  expect(header.version).toBe(2);
  expect(Number.isInteger(header.width) && header.width > 0).toBe(true);
  expect(Number.isInteger(header.height) && header.height > 0).toBe(true);
  expect(Number.isInteger(header.timestamp)).toBe(true);
  const events = rest.map((l) => JSON.parse(l) as Event);
  let last = 0;
  for (const e of events) {
    expect(e).toHaveLength(3);
    expect(typeof e[0]).toBe('number');
    expect(e[0]).toBeGreaterThanOrEqual(last);
    expect(['o', 'r']).toContain(e[1]);
    expect(typeof e[2]).toBe('string');
    if (e[1] === 'r') expect(e[2]).toMatch(/^\d+x\d+$/);
    last = e[0];
  }
  return { header, events };
}

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

describe('recording.cast against the server', () => {
  it('streams the log as asciicast v2 whose output bytes equal what a client received', async () => {
    // A Keyframe after every Output frame, so the log itself says the size before the resize.
    server = await startTestServer({ PTY_WS_KEYFRAME_INTERVAL_FRAMES: '1' });
    const api = new SessionsApi({ origin: server.origin, instanceId: 'local', token: server.devToken });
    const s = await api.create({ label: 'recorded' });
    // replay_from 0: every Output as Output, even what the process printed before the join's Keyframe was cut.
    const client = new PtyClient({ url: api.attachUrl(s.session_id), token: server.devToken, webSocket: nodeWebSocket(), size: { cols: 90, rows: 25 }, replayFrom: 0 });
    const probe = new ClientProbe(client);
    const startedAt = Date.now();
    await client.connect();
    client.send("printf '\\303\\251t\\303\\251 \\342\\202\\254 %s\\n' first-$((1+1))\r");
    await probe.waitForOutput('été € first-2');
    client.resize(100, 30);
    await probe.waitFor(() => client.geometry?.cols === 100, 'the Resize');
    client.send('echo second-$((4*4)); exit 3\r');
    const end = await client.whenEnded();
    expect(end.closed?.exitCode).toBe(3);

    const res = await api.recording(s.session_id);
    expect(res.headers.get('content-type')).toBe('application/x-asciicast');
    const { header, events } = parseCast(await res.text());
    expect(header).toMatchObject({ width: 90, height: 25, title: 'recorded' });
    expect(Math.abs(header.timestamp - startedAt / 1000)).toBeLessThan(5);

    const output = events.filter((e) => e[1] === 'o').map((e) => e[2]).join('');
    expect(Buffer.from(output, 'utf8').equals(Buffer.concat(probe.chunks))).toBe(true);
    expect(output).toContain('été € first-2');
    const resize = events.findIndex((e) => e[1] === 'r');
    expect(events[resize]![2]).toBe('100x30');
    const before = events.slice(0, resize).map((e) => e[2]).join('');
    expect(before).toContain('first-2');
    expect(before).not.toContain('second-16');
  });

  it('needs a bearer and a known session', async () => {
    server = await startTestServer();
    const url = `${server.origin}/agents/local/sessions/${server.defaultSession!.id}/recording.cast`;
    expect((await fetch(url)).status).toBe(401);
    const unknown = await fetch(`${server.origin}/agents/local/sessions/01a00000-0000-7000-8000-000000000000/recording.cast`, { headers: { authorization: `Bearer ${server.devToken}` } });
    expect(unknown.status).toBe(404);
    const empty = await fetch(url, { headers: { authorization: `Bearer ${server.devToken}` } });
    expect(empty.status).toBe(200);
    const { header, events } = parseCast(await empty.text());
    expect(header).toMatchObject({ width: 120, height: 30, title: 'default' });
    expect(events).toEqual([]);
  });
});

/** A Store with just the log, counting reads, to drive the encoder alone. */
function logStore(entries: LogEntry[]): Store & { reads: number } {
  const store = {
    reads: 0,
    async readLog(_id: string, after: number, limit?: number) {
      store.reads++;
      return entries.filter((e) => e.sequence > after).slice(0, limit ?? Infinity);
    },
    async oldestSequence() {
      return entries[0]?.sequence ?? null;
    },
    async lastSequence() {
      return entries.at(-1)?.sequence ?? 0;
    },
  };
  return store as unknown as Store & { reads: number };
}

const T0 = Date.parse('2026-03-01T12:00:00Z');
const entry = (sequence: number, ms: number, kind: string, fields: Record<string, unknown>): LogEntry => ({
  sessionId: 's',
  sequence,
  kind,
  createdAt: T0 + ms,
  frame: JSON.stringify(serverFrame<string>(PTY_FRAME_OP, { kind, ...fields }, sequence, T0 + ms)),
});
const out = (sequence: number, ms: number, bytes: number[] | string) =>
  entry(sequence, ms, 'Output', { stream: 'stdout', data: Buffer.from(typeof bytes === 'string' ? bytes : Uint8Array.from(bytes)).toString('base64') });
const record = { id: 's', label: null, cols: 120, rows: 30, createdAt: new Date(T0).toISOString() } as SessionRecord;

async function cast(store: Store, pageSize: number): Promise<string> {
  let text = '';
  for await (const chunk of asciicastChunks(store, record, pageSize)) text += chunk;
  return text;
}

describe('asciicast encoder', () => {
  it('reads the log in pages, keeps a UTF-8 character split across frames whole, and times events from the first frame', async () => {
    const euro = [...Buffer.from('€')];
    const store = logStore([
      entry(1, 0, 'MembershipChanged', { controllers: [], observers: [] }),
      out(2, 250, [0x61, euro[0]!]),
      out(3, 500, [euro[1]!, euro[2]!, 0x62]),
      entry(4, 750, 'Resize', { cols: 40, rows: 10 }),
      out(5, 1500, 'c'),
    ]);
    const { header, events } = parseCast(await cast(store, 2));
    expect(header).toEqual({ version: 2, width: 40, height: 10, timestamp: T0 / 1000, title: 'pty-ws session s', env: { TERM: 'xterm-256color' } });
    expect(events).toEqual([
      [0.25, 'o', 'a'],
      [0.5, 'o', '€b'],
      [0.75, 'r', '40x10'],
      [1.5, 'o', 'c'],
    ]);
    expect(store.reads).toBeGreaterThanOrEqual(3);
  });

  it('opens a pruned log on its first Keyframe: its size in the header, its screen as the first event', async () => {
    const keyframe = entry(12, 1000, 'Keyframe', {
      snapshot: Buffer.from('\x1b[1mscreen').toString('base64'),
      snapshot_format: 'vt100-screen-state-v1',
      snapshot_cols: 70,
      snapshot_rows: 20,
      anchor_sequence: 11,
    });
    const store = logStore([out(10, 0, 'lost'), out(11, 500, 'folded'), keyframe, out(13, 1250, 'live')]);
    const { header, events } = parseCast(await cast(store, 500));
    expect(header).toMatchObject({ width: 70, height: 20, timestamp: (T0 + 1000) / 1000 });
    expect(events).toEqual([
      [0, 'o', '\x1b[1mscreen'],
      [0.25, 'o', 'live'],
    ]);
  });
});
