// The A2A example of docs/a2a.md, run as a user would (tsx, the official SDK) against the real server:
// it prints the task's state and output readably, and leaves no session running behind it.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionsApi } from '../../src/client/sessions-api.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { until } from '../helpers/wait.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** The first ```ts block of docs/a2a.md's "An example with the official SDK". */
function example(): string {
  const doc = readFileSync(join(ROOT, 'docs/a2a.md'), 'utf8');
  const at = doc.indexOf('\n## An example with the official SDK');
  if (at < 0) throw new Error('docs/a2a.md has no "An example with the official SDK" section');
  const block = /```ts\n([\s\S]*?)```/.exec(doc.slice(at))?.[1];
  if (!block) throw new Error('no ts block in docs/a2a.md\'s "An example with the official SDK"');
  return block;
}

describe("docs/a2a.md's A2A example", { timeout: 60_000 }, () => {
  it('prints the state and the output, and ends the session it started', async () => {
    // In the repository, so its imports resolve to this checkout's node_modules.
    const dir = join(ROOT, 'test-output');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'a2a-example.mts');
    writeFileSync(file, example().replaceAll('http://127.0.0.1:8121', server.origin));
    const run = await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsx'), [file], { env: { ...process.env, PTY_WS_TOKEN: server.devToken! }, timeout: 45_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('TASK_STATE_COMPLETED hi\n');
    // Its session, and only that one besides the default, is there, and it ends.
    const api = new SessionsApi({ origin: server.origin, instanceId: 'local', token: server.devToken! });
    const started = (await api.list()).filter((s) => s.session_id !== server.defaultSession!.id);
    expect(started).toHaveLength(1);
    await until(async () => (await api.get(started[0]!.session_id)).state === 'closed', 'the example\'s session to end', 10_000);
  });
});
