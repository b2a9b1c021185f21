// A real server, `pty-ws` run in a private tmux terminal, and library clients beside it, for a test
// file of the CLI in a terminal: whatever a test started is stopped after it.
import { afterEach } from 'vitest';
import type { PtyClient } from '../../src/client/pty-client.ts';
import { startTestServer, type TestServer } from './server.ts';
import { Tmux } from './tmux.ts';

/** The command line that runs this checkout's `pty-ws`. */
export const PTY_WS = `${process.execPath} ${new URL('../../bin/pty-ws.js', import.meta.url).pathname}`;

export interface CliFixture {
  server(env?: Record<string, string>): Promise<TestServer>;
  /** Runs `command` (through /bin/sh) in a new terminal. */
  terminal(command: string, opts?: Parameters<typeof Tmux.start>[1]): Promise<Tmux>;
  /** Closes `client` after the test. */
  track<C extends PtyClient>(client: C): C;
}

/** Call once at the top of a test file: it registers the clean-up. */
export function cliFixture(): CliFixture {
  let server: TestServer | null = null;
  let tmux: Tmux | null = null;
  const clients: PtyClient[] = [];
  afterEach(async () => {
    await tmux?.kill();
    tmux = null;
    for (const c of clients.splice(0)) c.close();
    await server?.stop();
    server = null;
  });
  return {
    server: async (env = {}) => (server = await startTestServer(env)),
    terminal: async (command, opts) => (tmux = await Tmux.start(command, opts)),
    track: (client) => {
      clients.push(client);
      return client;
    },
  };
}
