// A resize flood (a window dragged, or a hostile client) is coalesced per connection
// (src/hub/resize-coalescer.ts): at most ~10 sizes a second are applied, each one host round trip
// and one logged Resize frame, and the last size sent wins. Real router, PTY host and shell.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESIZE_INTERVAL_MS } from '../../src/hub/resize-coalescer.ts';
import { TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({}, {}, { defaultSession: false });
});
afterAll(async () => {
  await server?.stop();
});

describe('resize flood', () => {
  it('2000 sizes in a burst become a few applied sizes, the last one winning; an observer hears only those', async () => {
    const { session_id: id } = await server.createSession({ command: '/bin/sh' });
    const flooder = await TestClient.connect(server.attachUrl(id), { token: server.devToken });
    await flooder.join({ role: 'controller' });
    const watcher = await TestClient.connect(server.attachUrl(id), { token: server.devToken });
    await watcher.join({ role: 'observer' });

    const started = Date.now();
    const COUNT = 2000;
    const last = { cols: 222, rows: 55 };
    for (let i = 0; i < COUNT - 1; i++) flooder.send('pty.session_resize', { cols: 40 + (i % 100), rows: 10 + (i % 30) });
    flooder.send('pty.session_resize', last);
    const resizes = () => watcher.frames().filter((f) => f.payload.kind === 'Resize');
    await watcher.waitFor(() => resizes().some((f) => f.payload.cols === last.cols && f.payload.rows === last.rows), 'the last size applied', 20_000);
    const elapsed = Date.now() - started;
    // Settled: nothing else arrives after the last one.
    await new Promise((r) => setTimeout(r, 3 * RESIZE_INTERVAL_MS));
    const applied = resizes();
    expect(applied.at(-1)!.payload).toMatchObject(last);
    expect(applied.length).toBeLessThanOrEqual(Math.ceil(elapsed / RESIZE_INTERVAL_MS) + 2);
    expect(flooder.frames().filter((f) => f.op === 'Error')).toEqual([]);

    const rec = (await (await fetch(`${server.origin}/agents/${server.config.instanceId}/sessions/${id}`, { headers: { authorization: `Bearer ${server.devToken}` } })).json()) as { terminal_size: unknown };
    expect(rec.terminal_size).toEqual(last);
    flooder.close();
    watcher.close();
  });

  it("an observer's resize is refused at once, not deferred", async () => {
    const { session_id: id } = await server.createSession({ command: '/bin/sh' });
    const c = await TestClient.connect(server.attachUrl(id), { token: server.devToken });
    await c.join({ role: 'controller' });
    const o = await TestClient.connect(server.attachUrl(id), { token: server.devToken });
    await o.join({ role: 'observer' });
    o.send('pty.session_resize', { cols: 50, rows: 20 });
    o.send('pty.session_resize', { cols: 51, rows: 20 });
    const errors = () => o.frames().filter((f) => f.op === 'Error');
    await o.waitFor(() => errors().length === 2 || undefined, 'two refusals');
    expect(errors().map((f) => f.payload.code)).toEqual(['PERMISSION_DENIED', 'PERMISSION_DENIED']);
    c.close();
    o.close();
  });

  it('a size applied at its turn answers its own request: PTY_RESIZE_FAILED naming it once the process has ended', async () => {
    const { session_id: id } = await server.createSession({ argv: ['/bin/sh', '-c', 'read x'] });
    const c = await TestClient.connect(server.attachUrl(id), { token: server.devToken });
    await c.join({ role: 'controller' });
    c.send('pty.session_resize', { cols: 70, rows: 20 });
    // Within the interval: it waits for its turn, and the process ends meanwhile.
    const late = c.send('pty.session_resize', { cols: 71, rows: 21 });
    c.send('pty.session_input', { data: Buffer.from('go\n').toString('base64') });
    const refused = await c.waitForFrame((f) => f.id === late && f.payload.kind === 'Error', 'the deferred resize answered');
    expect(refused.payload).toMatchObject({ code: 'PTY_RESIZE_FAILED', message: expect.stringContaining('71x21') });
    expect(c.frames().filter((f) => f.op === 'Error')).toEqual([]);
    c.close();
  });
});
