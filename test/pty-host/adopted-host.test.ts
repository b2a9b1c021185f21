// A PTY host a router left running for its tmux session, adopted by the next router on the same
// state dir: once nothing outlives the router any more, an orderly stop ends the host (and the
// tmux server with it) as it would one it started itself.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isAlive } from '../../pty/backends/process-tree.ts';
import { TestClient } from '../helpers/client.ts';
import { expectNoneLeft, killMultiplexers } from '../helpers/leftovers.ts';
import { Rest } from '../helpers/rest.ts';
import { startTestServer } from '../helpers/server.ts';
import { until } from '../helpers/wait.ts';

describe('a PTY host an earlier router on this state dir started', () => {
  it('stops with the router that adopted it once it runs no multiplexer session', async () => {
    const a = await startTestServer();
    const hostPid = a.ptyHostPid()!;
    try {
      const s = await a.createSession({ session_backend: 'tmux', argv: ['/bin/sh'] });
      const c = await TestClient.connect(s.attach_url, { token: a.devToken });
      await c.join({ role: 'controller' });
      c.close();
      await a.stop({ keepDir: true });
      expect(isAlive(hostPid)).toBe(true);

      const b = await startTestServer({}, {}, { dir: a.dir });
      expect(b.ptyHostPid()).toBe(hostPid);
      const rest = new Rest(b.origin, b.devToken);
      expect(await rest.delete(s.session_id)).toBe(202);
      await until(async () => (await rest.get(s.session_id)).state === 'closed', 'the tmux session to end');
      await b.stop({ keepDir: true });
      await until(() => !isAlive(hostPid), 'the adopted PTY host to stop', 10_000);
      // The tmux server went with it: nothing of this state dir runs.
      await expectNoneLeft(a.dir);
    } finally {
      if (isAlive(hostPid)) process.kill(hostPid, 'SIGKILL');
      await killMultiplexers(a.config.ptySocket);
      rmSync(a.dir, { recursive: true, force: true });
    }
  });
});
