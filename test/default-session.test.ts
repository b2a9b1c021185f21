// `pty-ws start` on the same state directory again: the default session nobody has started yet
// is reused instead of a new one piling up at every start (issue 21).
import { describe, expect, it } from 'vitest';
import { TestClient } from './helpers/client.ts';
import { Rest } from './helpers/rest.ts';
import { startTestServer } from './helpers/server.ts';

describe('the default session across restarts', () => {
  it('is reused while nobody has started it, and a new one is made once it has run', async () => {
    const first = await startTestServer();
    const id = first.defaultSession!.id;
    await first.stop({ keepDir: true });
    const again = await startTestServer({}, {}, { dir: first.dir, defaultSession: true });
    expect(again.defaultSession!.id).toBe(id);
    const c = await TestClient.connect(again.attachUrl(id), { token: again.devToken });
    await c.join({ role: 'controller' });
    c.close();
    await again.stop({ keepDir: true });
    const third = await startTestServer({}, {}, { dir: first.dir, defaultSession: true });
    expect(third.defaultSession!.id).not.toBe(id);
    const res = await fetch(`${third.origin}/agents/${third.config.instanceId}/sessions`, { headers: { authorization: `Bearer ${third.devToken}` } });
    const labels = ((await res.json()) as { sessions: Array<{ label: string | null }> }).sessions.map((s) => s.label);
    expect(labels).toEqual(['default', 'default']);
    await third.stop();
  });
});

describe('ending the default session', () => {
  it('the dev token may; a share of it may not, watch or pair', async () => {
    const s = await startTestServer();
    const id = s.defaultSession!.id;
    const rest = new Rest(s.origin, s.devToken);
    const c = await TestClient.connect(s.attachUrl(id), { token: s.devToken });
    await c.join({ role: 'controller' });
    c.close();
    const shares = await Promise.all(
      ['pty:observe', 'pty:control'].map(async (scope) => (await rest.request('POST', `/${id}/shares`, { scope })).json.token as string),
    );
    for (const token of shares) expect(await new Rest(s.origin, token).delete(id)).toBe(403);
    expect(await rest.delete(id)).toBe(202);
    await expect.poll(async () => (await rest.get(id)).state).toBe('closed');
    await s.stop();
  });
});
