// The router's background threads (the screen emulators' worker, the log commits' worker) run at a
// lower CPU priority than its main thread, which carries every keystroke and its echo: under a
// flood on a busy machine the main thread gets the CPU first (src/adapter/node/background-thread.ts,
// docs/architecture.md "Router flow control"). Linux only: elsewhere priorities are left alone.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { BACKGROUND_NICENESS } from '../../src/adapter/node/background-thread.ts';
import { TestClient } from '../helpers/client.ts';
import { expectNoneLeft } from '../helpers/leftovers.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** Each thread of this process (the router runs in it) with its niceness (/proc/<pid>/task/<tid>/stat, field 19). */
function niceness(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

const lowered = () => [...niceness().values()].filter((n) => n === BACKGROUND_NICENESS).length;

let server: TestServer;
let before: number;

beforeAll(async () => {
  before = lowered();
  server = await startTestServer();
});

afterAll(async () => {
  const dir = server.dir;
  await server.stop();
  await expectNoneLeft(dir);
});

it.runIf(process.platform === 'linux')('runs the screen and log-commit workers below the main thread', async () => {
  // A session with output: its emulator has parsed, and its log has committed.
  const rest = new Rest(server.origin, server.devToken);
  const s = await rest.create({ argv: ['/bin/sh', '-c', 'echo background-check; exec sleep 30'] });
  const c = await TestClient.connect(s.attach_url, { token: server.devToken });
  await c.join({ role: 'observer' });
  await vi.waitFor(() => expect(c.screen()).toContain('background-check'), { timeout: 10_000 });
  await server.hub.deps.store.flush();
  await vi.waitFor(() => expect(lowered() - before).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 50 });
  expect(niceness().get(process.pid)).toBe(0);
  c.close();
});
