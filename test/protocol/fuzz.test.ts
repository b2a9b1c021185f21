// Throws thousands of random and malformed frames at one connection; it and its neighbours live on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** mulberry32: a seeded PRNG so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const OPS = ['pty.session_input', 'pty.session_resize', 'pty.request_role', 'pty.request_keyframe', 'ping', 'UpdateServiceParameters', 'SendMessage', 'GetTask', 'Bogus', ''];

function frames(seed: number, count: number): Array<string | Buffer> {
  const rnd = prng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const str = (n: number) => Array.from({ length: n }, () => String.fromCharCode(Math.floor(rnd() * 0x3000))).join('');
  const value = (depth: number): unknown => {
    const r = rnd();
    if (depth > 3 || r < 0.3) return pick([null, true, false, 0, -1, 1e308, 3.5, '', 'x', str(8)]);
    if (r < 0.6) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, () => [pick(['cols', 'rows', 'role', 'data', 'session_id', 'task_id', str(3)]), value(depth + 1)]));
  };
  const out: Array<string | Buffer> = [];
  for (let i = 0; i < count; i++) {
    const kind = Math.floor(rnd() * 8);
    const id = `fuzz-${i}`;
    const ts = new Date().toISOString();
    switch (kind) {
      case 0:
        out.push(str(Math.floor(rnd() * 64)));
        break;
      case 1:
        out.push(JSON.stringify(value(0)));
        break;
      case 2:
        out.push(JSON.stringify({ op: pick(OPS), id, ts, payload: value(0) }));
        break;
      case 3:
        out.push(JSON.stringify({ op: value(1), id: value(1), ts: value(1), payload: value(1), sequence: value(1) }));
        break;
      case 4:
        out.push(`${'['.repeat(2000)}${']'.repeat(2000)}`);
        break;
      case 5:
        out.push(JSON.stringify({ op: pick(OPS), id, ts, payload: { data: str(20_000), cols: 'wide', rows: -5, role: str(4) } }));
        break;
      case 6:
        out.push(Buffer.from(Array.from({ length: Math.floor(rnd() * 64) }, () => Math.floor(rnd() * 256))));
        break;
      default:
        out.push(`{"op":"ping","id":"${id}","ts":"${ts}","payload":{}}`.slice(0, Math.floor(rnd() * 50)));
    }
  }
  return out;
}

describe('frame decoder fuzz', () => {
  it('answers every bad frame with an Error and keeps this connection and a neighbour working', async () => {
    const url = server.attachUrl(server.defaultSession!.id);
    const neighbour = await TestClient.connect(url, { token: server.devToken });
    await neighbour.join({ role: 'controller' });
    const target = await TestClient.connect(url, { token: server.devToken });
    await target.join({ role: 'observer' });
    const before = target.frames().length;

    const batch = frames(20261202, 3000);
    for (const f of batch) target.sendRaw(f);
    const pingId = target.send('ping');
    await target.waitForFrame((f) => f.op === 'pong' && f.id === pingId, 'pong after the fuzz', 60_000);

    const answers = target.frames().slice(before).filter((f) => f.op === 'Error' || f.op === 'pong' || f.op.endsWith('.Response') || f.payload.kind === 'Keyframe' || f.payload.kind === 'RoleAssigned');
    // Every frame is answered: an Error, or the reply of the rare well-formed one.
    expect(answers.length).toBeGreaterThanOrEqual(batch.length);
    for (const e of target.frames().filter((f) => f.op === 'Error')) {
      expect(['INVALID_REQUEST', 'UNSUPPORTED_OPERATION', 'PERMISSION_DENIED', 'RATE_LIMITED']).toContain(e.payload.code);
    }
    expect(target.closed).toBeNull();

    neighbour.send('pty.session_input', { data: b64('echo neighbour-ok\r') });
    await neighbour.waitForOutput('neighbour-ok');
    await target.waitForOutput('neighbour-ok');
    expect(server.logs.filter((l) => l.includes('"level":"error"'))).toEqual([]);
  }, 90_000);
});
