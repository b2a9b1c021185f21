// A fault the server did not foresee (docs/protocol.md §7: INTERNAL) is answered to the client
// as `internal server error` and nothing more, while the server's log line carries the error
// itself: its message, its stack and its cause, so it can be traced. Against the real router
// and PTY host, whose PTY host link is made to throw a plain Error on a resize and on a kill.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PtyHost } from '../../src/ports/pty-host.ts';
import { TestClient } from '../helpers/client.ts';
import { expectNoneLeft } from '../helpers/leftovers.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** Named so the stack can be recognised in the log, and must not be seen by a client. */
const SECRET = 'hostLinkBrokeOnPurpose';
let armed = false;

function faultyHost(host: PtyHost): PtyHost {
  function hostLinkBrokeOnPurpose(what: string): never {
    throw new Error(`the host link broke on ${what}`, { cause: new Error(`${SECRET} underneath`) });
  }
  return new Proxy(host, {
    get(target, key) {
      if (armed && key === 'resize') return () => hostLinkBrokeOnPurpose('resize');
      if (armed && key === 'kill') return () => hostLinkBrokeOnPurpose('kill');
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

interface LoggedError {
  name: string;
  message: string;
  stack?: string;
  cause?: LoggedError;
}
type Line = { level: string; msg: string; error?: LoggedError };

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({}, {}, { decoratePtyHost: faultyHost, defaultSession: false });
});

afterAll(async () => {
  armed = false;
  const dir = server.dir;
  await server.stop();
  await expectNoneLeft(dir);
});

const loggedFault = (msg: string): Line | undefined => server.logs.map((l) => JSON.parse(l) as Line).find((l) => l.msg === msg && l.level === 'error');

function expectTraceable(line: Line | undefined, what: string): void {
  expect(line, `log line for ${what}`).toBeDefined();
  expect(line!.error).toMatchObject({ name: 'Error', message: `the host link broke on ${what}` });
  expect(line!.error!.stack).toContain(SECRET);
  expect(line!.error!.stack).toMatch(/\n\s+at /);
  expect(line!.error!.cause).toMatchObject({ message: `${SECRET} underneath`, stack: expect.stringContaining(`${SECRET} underneath`) });
}

it('a frame handler that fails answers INTERNAL without details and logs the stack and cause', async () => {
  const { attach_url } = await server.createSession({ argv: ['/bin/cat'] });
  const client = await TestClient.connect(attach_url, { token: server.devToken });
  await client.join({ role: 'controller' });
  armed = true;
  const id = client.send('pty.session_resize', { cols: 91, rows: 27 });
  const error = await client.waitForFrame((f) => f.id === id && f.op === 'Error', 'the Error answering the resize');
  armed = false;
  expect(error.payload).toMatchObject({ code: 'INTERNAL', message: 'internal server error' });
  const sent = JSON.stringify(error);
  expect(sent).not.toContain(SECRET);
  expect(sent).not.toContain('host link');
  expect(sent).not.toMatch(/\bat /);
  expectTraceable(loggedFault('frame handler failed'), 'resize');
  // The connection lives on.
  client.sendRaw(JSON.stringify({ op: 'ping', id: 'p1', ts: new Date().toISOString(), payload: {} }));
  await client.waitForFrame((f) => f.id === 'p1' && f.op === 'pong', 'pong after the fault');
  client.close();
});

it('a REST handler that fails answers 500 without details and logs the stack and cause', async () => {
  const { session_id, attach_url } = await server.createSession({ argv: ['/bin/cat'] });
  // A session's process starts at its first join; only a running one is signalled.
  const client = await TestClient.connect(attach_url, { token: server.devToken });
  await client.join({ role: 'controller' });
  armed = true;
  const res = await fetch(`${server.origin}/agents/${server.config.instanceId}/sessions/${session_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${server.devToken}` } });
  const body = await res.text();
  armed = false;
  expect(res.status).toBe(500);
  expect(JSON.parse(body)).toEqual({ error: { code: 'internal', message: 'internal server error' } });
  expectTraceable(loggedFault('REST handler failed'), 'kill');
  client.close();
});
