// A remote PTY host's link lost and restored (docs/remote-hosts.md, docs/protocol.md §7.3), against
// real parts: the router and the host as separate processes, the host linked through a TCP relay
// the test cuts; a real WebSocket client attached to a session printing numbered lines throughout.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { b64, TestClient, type Frame } from '../helpers/client.ts';
import { runCli, startRouterProcess, type Child, type RouterProcess } from '../helpers/processes.ts';
import { startProxy, type CuttableProxy } from '../helpers/proxy.ts';
import { launchChromium, openLivePage, waitForText } from '../helpers/browser.ts';
import { until } from '../helpers/wait.ts';

const dirs: string[] = [];
const children: Child[] = [];
let router: RouterProcess;
let relay: CuttableProxy;
let host: Child;

const tempDir = (tag: string) => {
  const d = mkdtempSync(join(tmpdir(), `pty-ws-link-loss-${tag}-`));
  dirs.push(d);
  return d;
};
const authed = () => ({ authorization: `Bearer ${router.token}` });
const getJson = async <T>(path: string): Promise<{ status: number; body: T }> => {
  const res = await fetch(`${router.origin}${path}`, { headers: authed() });
  return { status: res.status, body: (await res.json()) as T };
};
const connected = async (name: string) =>
  (await getJson<{ hosts: Array<{ name: string; connected: boolean }> }>('/agents/local/hosts')).body.hosts.find((h) => h.name === name)?.connected === true;

beforeAll(async () => {
  router = await startRouterProcess({ 'state-dir': tempDir('router') });
  children.push(router);
  relay = await startProxy(Number(new URL(router.origin).port));
  const minted = await fetch(`${router.origin}/agents/local/hosts/flaky/token`, { method: 'POST', headers: { ...authed(), 'content-type': 'application/json' }, body: '{}' });
  expect(minted.status).toBe(201);
  const dir = tempDir('host');
  const tokenFile = join(dir, 'host.token');
  writeFileSync(tokenFile, (await minted.json() as { token: string }).token, { mode: 0o600 });
  // The host dials the relay, not the router: cutting the relay cuts the link.
  host = runCli(['host', '--connect', relay.origin, '--name', 'flaky', '--token-file', tokenFile, '--state-dir', dir, '--allow-command', '/bin/sh *'], {});
  children.push(host);
  await until(() => connected('flaky'), 'the host to link', 60_000);
}, 90_000);

// A test that failed with the link cut leaves it whole for the next.
afterEach(async () => {
  relay.restore();
  await until(() => connected('flaky'), 'the host to link again', 60_000);
}, 90_000);

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  await relay?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The log frames a live member saw after its join: every one a number of its own. */
const logSequences = (frames: Frame[]) =>
  frames.filter((f) => f.op === 'pty.session_frame' && ['Output', 'Resize', 'MembershipChanged', 'Keyframe', 'Closed'].includes(f.payload.kind ?? '')).map((f) => f.sequence);

it('a cut link is a notice, not an end: host_unreachable shown and input refused while it is down, then output goes on with every byte and number', async () => {
  const created = await fetch(`${router.origin}/agents/local/sessions`, {
    method: 'POST',
    headers: { ...authed(), 'content-type': 'application/json' },
    body: JSON.stringify({ host: 'flaky', command: 'i=0; while :; do i=$((i+1)); echo "L$i."; sleep 0.005; done' }),
  });
  expect(created.status).toBe(201);
  const { session_id: id, attach_url } = (await created.json()) as { session_id: string; attach_url: string };

  const a = await TestClient.connect(attach_url, { token: router.token });
  const joined = await a.join({ role: 'controller' }, { replay_from: 0 });
  await a.waitForOutput('L50.');

  relay.cut({ refuse: true });
  const lost = await a.waitForFrame((f) => f.op === 'Error' && f.payload.reason === 'host_unreachable', 'the host_unreachable notice', 20_000);
  expect(lost.payload).toMatchObject({ code: 'INTERNAL', retryable: true });
  expect(String(lost.payload.message)).toContain('flaky');

  // Shown in REST, the fleet listing, the CLI and /readyz while the link is down.
  expect((await getJson<{ state: string; host: string }>(`/agents/local/sessions/${id}`)).body).toMatchObject({ state: 'host_unreachable', host: 'flaky' });
  const fleet = await getJson<{ sessions: Array<{ session_id: string; state: string }> }>('/sessions');
  expect(fleet.body.sessions.find((s) => s.session_id === id)?.state).toBe('host_unreachable');
  const cli = runCli(['sessions', 'list'], { PTY_WS_URL: router.origin, PTY_WS_TOKEN: router.token });
  expect(await cli.exited).toBe(0);
  expect(cli.stdout()).toMatch(new RegExp(`${id}\\s+host_unreachable\\s+flaky\\s`));
  const notReady = await fetch(`${router.origin}/readyz`);
  expect(notReady.status).toBe(503);
  expect(((await notReady.json()) as { checks: Record<string, string> }).checks['host:flaky']).toContain('not linked');

  // Input gets a clear error, not silence; the connection stays.
  const typed = a.send('pty.session_input', { data: b64('typed-while-down') });
  const refused = await a.waitForFrame((f) => f.id === typed && f.op === 'Error', 'input refused while the link is down');
  expect(refused.payload).toMatchObject({ code: 'INTERNAL', reason: 'host_unreachable' });
  expect(a.closed).toBeNull();

  // One who joins meanwhile hears it at its join.
  const b = await TestClient.connect(attach_url, { token: router.token });
  const bJoined = await b.join({ role: 'observer' });
  expect(bJoined.at(-1)?.payload.kind).toBe('Keyframe');
  await b.waitForFrame((f) => f.op === 'Error' && f.payload.reason === 'host_unreachable', 'the notice at a join while the link is down');

  relay.restore();
  await b.waitForFrame((f) => f.op === 'Error' && f.payload.reason === 'host_linked', 'the late joiner to hear the host is back', 60_000);
  const back = await a.waitForFrame((f) => f.op === 'Error' && f.payload.reason === 'host_linked', 'the notice that the host is back', 60_000);
  expect(String(back.payload.message)).toContain('flaky');
  expect((await getJson<{ state: string }>(`/agents/local/sessions/${id}`)).body.state).toBe('running');
  expect((await fetch(`${router.origin}/readyz`)).status).toBe(200);

  // Without rejoining: typing is taken (the terminal echoes it) and output goes on.
  const again = a.send('pty.session_input', { data: b64('zz-back') });
  await a.waitForOutput('zz-back');
  expect(a.frames().some((f) => f.id === again && f.op === 'Error')).toBe(false);
  const seen = Math.max(...[...a.output().matchAll(/L(\d+)\./g)].map((m) => Number(m[1])));
  await a.waitForOutput(`L${seen + 100}.`, 20_000);
  expect(a.closed).toBeNull();
  expect(a.frames().some((f) => f.payload.kind === 'Error' && f.payload.code === 'PTY_OUTPUT_LAGGED')).toBe(false);

  // Every log number once, in order, none skipped; every numbered line there, once, in order.
  const sequences = logSequences(a.frames().slice(joined.length));
  expect(sequences.length).toBeGreaterThan(10);
  sequences.forEach((n, i) => i > 0 && expect(n, `sequence after ${sequences[i - 1]}`).toBe(sequences[i - 1]! + 1));
  const numbers = [...a.output().matchAll(/L(\d+)\./g)].map((m) => Number(m[1]));
  expect(numbers).toEqual(numbers.map((_, i) => i + 1));
  a.close();
  b.close();
}, 180_000);

it('the page says the host is unreachable while the link is cut, then that it is back, and clears the error', async () => {
  const created = await fetch(`${router.origin}/agents/local/sessions`, {
    method: 'POST',
    headers: { ...authed(), 'content-type': 'application/json' },
    body: JSON.stringify({ host: 'flaky', command: 'exec /bin/sh' }),
  });
  const { session_id: id } = (await created.json()) as { session_id: string };
  const browser = await launchChromium();
  try {
    const problems: string[] = [];
    const page = await openLivePage(browser, `${router.origin}/#token=${router.token}&session=${id}`, problems);
    relay.cut({ refuse: true });
    await waitForText(page, '#error', /PTY host flaky is unreachable/, 20_000);
    relay.restore();
    await waitForText(page, '#notice', /PTY host flaky is linked again/, 60_000);
    expect(await page.locator('#error').isVisible()).toBe(false);
    expect(await page.locator('#status').textContent()).toBe('live');
    expect(problems).toEqual([]);
  } finally {
    await browser.close();
  }
}, 120_000);

it('a flood cut mid-way and restored arrives whole: every line once and in order, every sequence number once', async () => {
  const last = 200_000;
  const created = await fetch(`${router.origin}/agents/local/sessions`, {
    method: 'POST',
    headers: { ...authed(), 'content-type': 'application/json' },
    body: JSON.stringify({ host: 'flaky', command: `sleep 1; seq 1 ${last}; echo flood-done; exec sleep 600` }),
  });
  const { attach_url } = (await created.json()) as { attach_url: string };
  const a = await TestClient.connect(attach_url, { token: router.token });
  const joined = await a.join({ role: 'observer' }, { replay_from: 0 });
  await a.waitForOutput('\n5000\r', 30_000);
  relay.cut({ refuse: true });
  await a.waitForFrame((f) => f.op === 'Error' && f.payload.reason === 'host_unreachable', 'the host_unreachable notice', 20_000);
  // The host stops reading the PTY meanwhile: the flood waits rather than being dropped.
  await new Promise((r) => setTimeout(r, 1500));
  relay.restore();
  await a.waitForOutput('flood-done', 120_000);
  const lines = [...a.output().matchAll(/^(\d+)\r?$/gm)].map((m) => Number(m[1]));
  expect(lines.length).toBe(last);
  // The cut came mid-flood: much of it arrived after the notice.
  const notice = a.frames().findIndex((f) => f.payload.reason === 'host_unreachable');
  const before = a.frames().slice(0, notice).filter((f) => f.payload.kind === 'Output').map((f) => Buffer.from(String(f.payload.data), 'base64').toString('utf8')).join('');
  expect(before.length).toBeLessThan(a.output().length / 2);
  expect(lines.every((n, i) => n === i + 1)).toBe(true);
  const sequences = logSequences(a.frames().slice(joined.length));
  expect(sequences.every((n, i) => i === 0 || n === sequences[i - 1]! + 1)).toBe(true);
  expect(a.frames().some((f) => f.payload.kind === 'Error' && f.payload.code === 'PTY_OUTPUT_LAGGED')).toBe(false);
  a.close();
}, 240_000);
