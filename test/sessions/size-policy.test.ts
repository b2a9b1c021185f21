// The session's size with several controllers (docs/protocol.md §5.5), against the real server
// and a real shell: the last resize wins, and when the controller whose size is in force leaves,
// disconnects or becomes an observer, the latest size of those still controlling comes back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  token = server.devToken!;
});
afterAll(async () => {
  await server?.stop();
});

async function joined(url: string, payload: Record<string, unknown>): Promise<TestClient> {
  const c = await TestClient.connect(url, { token });
  await c.join(payload);
  return c;
}

const resizes = (c: TestClient) => c.frames().flatMap((f) => (f.payload.kind === 'Resize' ? [`${f.payload.cols as number}x${f.payload.rows as number}`] : []));

/** Waits until `c` has seen the session become `size`, and the shell agrees. */
async function sizeIs(c: TestClient, size: string): Promise<void> {
  await c.waitFor(() => resizes(c).at(-1) === size, `Resize ${size}`);
  const [cols, rows] = size.split('x');
  c.send('pty.session_input', { data: b64(`stty size | sed 's/ /=/'\r`) });
  await c.waitForOutput(`${rows}=${cols}`);
}

describe('the session size follows its controllers', { timeout: 60_000 }, () => {
  it('gives the desktop its size back when a smaller controller leaves, disconnects or only watches', async () => {
    const url = (await server.createSession({})).attach_url;
    // The desktop starts the session at its size and never resizes.
    const desktop = await joined(url, { role: 'controller', cols: 160, rows: 48 });

    for (const how of ['leave', 'disconnect', 'observe'] as const) {
      const phone = await joined(url, { role: 'controller', cols: 43, rows: 20 });
      phone.send('pty.session_resize', { cols: 43, rows: 20 });
      await sizeIs(desktop, '43x20');
      if (how === 'leave') phone.send('pty.leave_session');
      if (how === 'disconnect') phone.close();
      if (how === 'observe') phone.send('pty.request_role', { role: 'observer' });
      await sizeIs(desktop, '160x48');
      if (how === 'observe') phone.close();
    }
    expect(resizes(desktop)).toEqual(['43x20', '160x48', '43x20', '160x48', '43x20', '160x48']);
  });

  it('falls back to the latest ask of those still controlling; an observer and a controller that is not in force change nothing', async () => {
    const url = (await server.createSession({})).attach_url;
    const a = await joined(url, { role: 'controller', cols: 100, rows: 30 });
    const b = await joined(url, { role: 'controller', cols: 90, rows: 28 });
    const watcher = await joined(url, { role: 'observer', cols: 20, rows: 5 });
    b.send('pty.session_resize', { cols: 70, rows: 22 });
    await sizeIs(a, '70x22');
    a.send('pty.session_resize', { cols: 120, rows: 40 });
    await sizeIs(a, '120x40');
    // b's size is not the one in force: its leaving changes nothing; neither does the observer's.
    b.send('pty.leave_session');
    await b.waitForClose();
    watcher.close();
    await watcher.waitForClose();
    const c = await joined(url, { role: 'controller', cols: 60, rows: 18 });
    c.send('pty.session_resize', { cols: 60, rows: 18 });
    await sizeIs(a, '60x18');
    c.close();
    await sizeIs(a, '120x40');
    expect(resizes(a)).toEqual(['70x22', '120x40', '60x18', '120x40']);
  });
});
