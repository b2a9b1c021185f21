// The PTY-level errors of pty-extensions-v1 §5 (docs/protocol.md §7.4), against the real router,
// PTY host and screen worker: a resize is broadcast only once the host applied it, else the
// requester alone gets PTY_RESIZE_FAILED; input the host cannot write is PTY_WRITE_FAILED; a
// Keyframe that cannot be cut is KEYFRAME_UNAVAILABLE, and the connection goes on.
import { afterEach, expect, it } from 'vitest';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import type { ScreenService } from '../../src/router/router.ts';
import { b64, TestClient, type Frame } from '../helpers/client.ts';
import { expectNoneLeft } from '../helpers/leftovers.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer | undefined;

afterEach(async () => {
  if (!server) return;
  const dir = server.dir;
  await server.stop();
  server = undefined;
  await expectNoneLeft(dir);
});

const ptyError = (c: TestClient, id: string) => c.waitForFrame((f) => f.id === id && f.op === 'pty.session_frame' && f.payload.kind === 'Error', `the PTY error answering ${id}`);
const resizes = (c: TestClient) => c.frames().filter((f: Frame) => f.payload.kind === 'Resize').map((f) => [f.payload.cols, f.payload.rows]);

it('a resize is broadcast once applied; after the process is gone a resize is PTY_RESIZE_FAILED (nothing broadcast) and input PTY_WRITE_FAILED', async () => {
  server = await startTestServer();
  const rest = new Rest(server.origin, server.devToken);
  const s = await rest.create({ argv: ['/bin/sh', '-c', 'read x; stty size; echo bye-now'], terminal_size: { cols: 80, rows: 24 } });
  const controller = await TestClient.connect(s.attach_url, { token: server.devToken });
  await controller.join({ role: 'controller' });
  const observer = await TestClient.connect(s.attach_url, { token: server.devToken });
  await observer.join({ role: 'observer' });

  controller.send('pty.session_resize', { cols: 100, rows: 30 });
  await observer.waitFor(() => resizes(observer).length === 1, 'the Resize at the observer');
  controller.send('pty.session_input', { data: b64('go\n') });
  // The program saw the applied size, then exits: the host still holds its PTY for a moment.
  await controller.waitForOutput('bye-now');
  expect(controller.output()).toContain('30 100');
  await new Promise((r) => setTimeout(r, 50));

  const resizeId = controller.send('pty.session_resize', { cols: 90, rows: 20 });
  const inputId = controller.send('pty.session_input', { data: b64('late\n') });
  const refused = await ptyError(controller, resizeId);
  expect(refused.payload).toMatchObject({ kind: 'Error', code: 'PTY_RESIZE_FAILED' });
  expect(String(refused.payload.message)).toContain('90x20');
  expect((await ptyError(controller, inputId)).payload).toMatchObject({ kind: 'Error', code: 'PTY_WRITE_FAILED' });

  await controller.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed');
  await observer.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed at the observer');
  expect(resizes(controller)).toEqual([[100, 30]]);
  expect(resizes(observer)).toEqual([[100, 30]]);
  // Only the requester heard of the failures; the connection stayed open until the session ended.
  expect(observer.frames().filter((f) => f.payload.kind === 'Error')).toEqual([]);
  expect(controller.frames().some((f) => f.op === 'Error')).toBe(false);
  expect(controller.frames().find((f) => f.payload.kind === 'Closed')?.payload).toMatchObject({ reason: 'normal', exit_code: 0 });
});

it('with the screen worker gone, a requested or a join Keyframe is KEYFRAME_UNAVAILABLE and the session streams on', async () => {
  let screens: ScreenService | undefined;
  server = await startTestServer({}, {}, { decorateScreens: (real) => (screens = real) });
  const rest = new Rest(server.origin, server.devToken);
  const s = await rest.create({ argv: ['/bin/cat'], terminal_size: { cols: 80, rows: 24 } });
  const a = await TestClient.connect(s.attach_url, { token: server.devToken });
  await a.join({ role: 'controller' });
  a.send('pty.session_input', { data: b64('before\n') });
  await a.waitForOutput('before');

  // The worker thread that runs every emulator stops (as if it crashed).
  await screens!.close();

  const requestId = a.send('pty.request_keyframe');
  const unavailable = await ptyError(a, requestId);
  expect(unavailable.payload).toMatchObject({ kind: 'Error', code: 'KEYFRAME_UNAVAILABLE' });
  a.send('pty.session_input', { data: b64('after\n') });
  await a.waitForOutput('after');

  const b = await TestClient.connect(s.attach_url, { token: server.devToken });
  const joinId = b.send('pty.join_session', { role: 'observer' });
  expect((await ptyError(b, joinId)).payload).toMatchObject({ code: 'KEYFRAME_UNAVAILABLE' });
  expect(b.frames().map((f) => f.payload.kind ?? f.op)).toEqual(['binding_hello', 'RoleAssigned', 'MembershipChanged', 'Error']);
  a.send('pty.session_input', { data: b64('later\n') });
  await b.waitForOutput('later');
  expect(a.frames().some((f) => f.op === 'Error')).toBe(false);

  // The client library (page, CLI) takes such a join as done, says why, and shows what follows.
  const client = new PtyClient({ url: server.attachUrl(s.session_id), token: server.devToken, webSocket: nodeWebSocket(), size: { cols: 80, rows: 24 }, role: 'observer' });
  const errors: string[] = [];
  let shown = '';
  client.on('error', (e) => errors.push(e.code));
  client.on('output', (d) => (shown += Buffer.from(d).toString()));
  await client.connect();
  expect(errors).toEqual(['KEYFRAME_UNAVAILABLE']);
  a.send('pty.session_input', { data: b64('for-the-client\n') });
  await b.waitForOutput('for-the-client');
  await b.waitFor(() => shown.includes('for-the-client'), 'the output at the client library');
  client.close();
});
