// The replay log's writer holds no timer while idle. In a file of its own: it counts the process's
// timers, which the clients of other tests (a remote libSQL client's HTTP timers) change at will.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { openStore } from '../../storage/open.ts';

it('holds no timer while idle', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-idle-'));
  const store = await openStore({ url: `file:${join(dir, 'test.db')}` });
  try {
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const frame = JSON.stringify({ op: 'pty.session_frame', sequence: 1, payload: { kind: 'Output', data: 'chunk' } });
    store.appendLog({ sessionId: 's', sequence: 1, kind: 'Output', createdAt: 1_000_000, frame });
    expect(timers()).toBe(before + 1);
    await store.flush();
    expect(timers()).toBe(before);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
