// An ended session is retired: once its end is stored and nobody is joining it, the hub keeps
// nothing of it in memory (no screen, no live record). It still serves what the log holds: a join
// gets the frames asked for, its last screen rebuilt from the log, and goodbye; REST reads it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { until } from '../helpers/wait.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  token = server.devToken!;
});

afterAll(async () => {
  await server?.stop();
});

async function endedSession(): Promise<{ id: string; url: string }> {
  const created = await server.createSession({ command: "read x; printf 'hello \\033[31mred\\033[0m done'; exit 3" });
  const c = await TestClient.connect(created.attach_url, { token });
  await c.join({ role: 'controller' });
  expect(server.hub.holds(created.session_id)).toBe(true);
  c.send('pty.session_input', { data: b64('go\r') });
  await c.waitForFrame((f) => f.payload.kind === 'Closed', 'Closed');
  await c.waitForClose();
  return { id: created.session_id, url: created.attach_url };
}

it('forgets an ended session once its end is stored, and still serves its log and last screen', async () => {
  const { id, url } = await endedSession();
  await until(() => !server.hub.holds(id), 'the ended session to be retired');

  const rest = await new Rest(server.origin, token).get(id);
  expect(rest).toMatchObject({ state: 'closed', exit_code: 3, close_reason: 'normal' });
  expect(server.hub.holds(id)).toBe(false);

  const later = await TestClient.connect(url, { token });
  later.send('pty.join_session', { role: 'observer' }, { replay_from: 0 });
  expect((await later.waitForClose()).code).toBe(1000);
  expect(later.frames().find((f) => f.payload.kind === 'RoleAssigned')?.payload.role).toBe('observer');
  expect(later.frames().find((f) => f.payload.kind === 'Closed')?.payload.exit_code).toBe(3);
  expect(later.output()).toContain('done');
  const screen = later.screen();
  expect(screen).toContain('hello');
  expect(screen).toContain('red');
  expect(screen).toContain('done');
  expect(later.frames().some((f) => f.op === 'binding_goodbye')).toBe(true);
  await until(() => !server.hub.holds(id), 'the session to be forgotten again after the join');
});

it('gives every one of several simultaneous joins of a retired session its last screen', async () => {
  const { id, url } = await endedSession();
  await until(() => !server.hub.holds(id), 'the ended session to be retired');
  const clients = await Promise.all([0, 1, 2].map(() => TestClient.connect(url, { token })));
  for (const c of clients) c.send('pty.join_session', { role: 'observer' });
  for (const c of clients) {
    await c.waitForClose();
    expect(c.screen()).toContain('done');
  }
  expect(server.hub.holds(id)).toBe(false);
});
