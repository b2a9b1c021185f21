// Remote PTY hosts (docs/remote-hosts.md) against real parts: the router and a second PTY host as
// separate processes, each with its own state dir, the host dialing in over loopback WebSocket; a
// real WebSocket client attaches to a session that runs on the remote host.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { freePort, runCli, startRouterProcess, type Child, type RouterProcess } from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';
import { a2aClient, rejection, send, textOf, userText } from '../helpers/a2a.ts';

const HOST_PROTOCOL = 'pty-ws.host.v1';
const dirs: string[] = [];
const children: Child[] = [];
let router: RouterProcess;

const tempDir = (tag: string) => {
  const d = mkdtempSync(join(tmpdir(), `pty-ws-remote-${tag}-`));
  dirs.push(d);
  return d;
};

const hostsUrl = () => `${router.origin}/agents/local/hosts`;
const linkUrl = (name: string) => `${router.wsOrigin}/agents/local/hosts/${name}/link`;
const authed = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra });

async function hosts(): Promise<Array<{ name: string; connected: boolean; since: string | null; backends: string[]; sessions: number }>> {
  const res = await fetch(hostsUrl(), { headers: authed(router.token) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { hosts: Array<{ name: string; connected: boolean; since: string | null; backends: string[]; sessions: number }> }).hosts;
}

/** `pty-ws token --host NAME` against the running router, as an operator would: the credential on stdout. */
async function mintWithCli(name: string): Promise<string> {
  const cli = runCli(['token', '--host', name], { PTY_WS_URL: router.origin, PTY_WS_TOKEN: router.token });
  expect(await cli.exited).toBe(0);
  return cli.stdout().trim();
}

/** `pty-ws host --connect` in a state dir of its own, with its credential in a file. */
function startRemoteHost(name: string, token: string): Child & { tokenFile: string } {
  const dir = tempDir(name);
  const tokenFile = join(dir, 'host.token');
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  // Its policy allows the shell these sessions run (the default would be root's login shell only).
  const host = runCli(['host', '--connect', router.origin, '--name', name, '--token-file', tokenFile, '--state-dir', dir, '--allow-command', '/bin/sh *'], {});
  children.push(host);
  return { ...host, tokenFile };
}

async function linked(name: string): Promise<void> {
  await until(async () => (await hosts()).find((h) => h.name === name)?.connected, `host ${name} to link`, 60_000);
}

async function createSession(body: Record<string, unknown>, token = router.token): Promise<Response> {
  return fetch(`${router.origin}/agents/local/sessions`, { method: 'POST', headers: authed(token, { 'content-type': 'application/json' }), body: JSON.stringify(body) });
}

beforeAll(async () => {
  router = await startRouterProcess({ 'state-dir': tempDir('router') });
  children.push(router);
}, 90_000);

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a remote PTY host linked over WebSocket', () => {
  let hostToken: string;
  let host: Child & { tokenFile: string };
  let session: { session_id: string; attach_url: string; host?: string };

  beforeAll(async () => {
    hostToken = await mintWithCli('laptop');
    expect(hostToken).toMatch(/^pwhost_/);
    host = startRemoteHost('laptop', hostToken);
    await linked('laptop');
  }, 90_000);

  it('lists the linked host with its backends, and refuses a second link of the same name (logged)', async () => {
    const [laptop] = (await hosts()).filter((h) => h.name === 'laptop');
    expect(laptop).toMatchObject({ connected: true, backends: expect.arrayContaining(['native']) });
    expect(Date.parse(laptop!.since!)).toBeGreaterThan(0);

    expect(await TestClient.refusedStatus(linkUrl('laptop'), { token: hostToken, protocols: [HOST_PROTOCOL] })).toBe(409);
    await until(() => router.stderr().includes('host link refused: the name is linked already'), 'the refusal in the router log');
    // The first link is still the one in use.
    expect((await hosts()).find((h) => h.name === 'laptop')?.since).toBe(laptop!.since);
  });

  it('runs a session on the remote host: attach, type, see the output, replay it after a reconnect', async () => {
    const marker = tempDir('marker');
    const created = await createSession({ host: 'laptop', command: 'cd /; exec /bin/sh', label: 'on-laptop' });
    expect(created.status).toBe(201);
    session = (await created.json()) as typeof session;
    expect(session.host).toBe('laptop');

    const a = await TestClient.connect(session.attach_url, { token: router.token });
    await a.join({ role: 'controller' });
    // The shell runs in the remote host's process tree: it writes the host's pid's parent chain into a file we read.
    a.send('pty.session_input', { data: b64(`echo remote-$((6*7)); echo $PPID > ${marker}/ppid\r`) });
    await a.waitForOutput('remote-42');
    const ppid = Number(readFileSync(join(marker, 'ppid'), 'utf8').trim());
    expect(ppid).toBeGreaterThan(0);
    expect(await descendsFrom(ppid, host.proc.pid!)).toBe(true);
    expect(await descendsFrom(ppid, router.proc.pid!)).toBe(false);
    a.close();

    const b = await TestClient.connect(session.attach_url, { token: router.token });
    await b.join({ role: 'observer' }, { replay_from: 0 });
    await b.waitForOutput('remote-42');
    // Typing goes on after the reconnect, from another controller; the observer sees it live.
    const c = await TestClient.connect(session.attach_url, { token: router.token });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo again-$((2+3))\r') });
    await c.waitForOutput('again-5');
    await b.waitForOutput('again-5');
    expect((await hosts()).find((h) => h.name === 'laptop')?.sessions).toBe(1);
    b.close();
    c.close();
  });

  it("carries the credit loop over the link: a remote session's flood arrives whole, and another's echo is not held up by it", async () => {
    const dir = tempDir('flood');
    const file = join(dir, 'flood.txt');
    // No newlines, so the terminal's output processing leaves the bytes as they are.
    const content = Buffer.from(randomBytes(3 * 1024 * 1024).toString('base64'));
    writeFileSync(file, content);
    const typing = (await (await createSession({ host: 'laptop', command: '/bin/cat', label: 'typing' })).json()) as typeof session;
    const typist = await TestClient.connect(typing.attach_url, { token: router.token });
    await typist.join({ role: 'controller' });
    const flooding = (await (await createSession({ host: 'laptop', command: `sleep 0.5; exec cat ${file}`, label: 'flood' })).json()) as typeof session;
    const reader = await TestClient.connect(flooding.attach_url, { token: router.token, protocols: ['pty-ws.v1.binary'] });
    reader.send('pty.join_session', { role: 'controller' }, { replay_from: 0 });
    // The host's loop pauses the flood until the router takes its output: its credit must come back over the link.
    typist.send('pty.session_input', { data: b64('echo-under-flood\r') });
    await typist.waitForOutput('echo-under-flood', 10_000);
    await reader.waitFor(() => reader.closed, 'the flood to end and the server to say goodbye', 120_000);
    const got = reader.received.flatMap((r) => {
      if (r.type === 'binary') return [r.data.subarray(13)];
      return r.frame.payload.kind === 'Output' ? [Buffer.from(String(r.frame.payload.data), 'base64')] : [];
    });
    expect(Buffer.concat(got).equals(content)).toBe(true);
    typist.close();
  }, 180_000);

  it('places a session from A2A message metadata and from the CLI', async () => {
    const marker = tempDir('a2a');
    const client = await a2aClient(router.origin, router.token, 'JSONRPC');
    const task = await client.sendMessage(send({ message: userText(`echo a2a-$((5*5)); echo $$ > ${marker}/pid`, { metadata: { 'pty-ws/session': { host: 'laptop' } } }) }));
    if (!('status' in task)) throw new Error('expected a task');
    expect(textOf(task)).toContain('a2a-25');
    expect(await descendsFrom(Number(readFileSync(join(marker, 'pid'), 'utf8').trim()), host.proc.pid!)).toBe(true);
    const rec = (await (await fetch(`${router.origin}/agents/local/sessions/${task.contextId}`, { headers: authed(router.token) })).json()) as Record<string, unknown>;
    expect(rec).toMatchObject({ host: 'laptop' });
    const refused = await rejection(client.sendMessage(send({ message: userText('true', { metadata: { 'pty-ws/session': { host: 'nowhere' } } }) })));
    expect(refused.message).toContain('nowhere');

    const cli = runCli(['sessions', 'create', '--host', 'laptop', '--json'], { PTY_WS_URL: router.origin, PTY_WS_TOKEN: router.token });
    expect(await cli.exited).toBe(0);
    expect(JSON.parse(cli.stdout())).toMatchObject({ host: 'laptop', state: 'created' });
    const cliRefused = runCli(['sessions', 'create', '--host', 'nowhere'], { PTY_WS_URL: router.origin, PTY_WS_TOKEN: router.token });
    expect(await cliRefused.exited).not.toBe(0);
    expect(cliRefused.stderr()).toContain('host_unknown');
  });

  it('places nothing on an unknown or unlinked host, with the binding error', async () => {
    const unknown = await createSession({ host: 'nowhere' });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: { code: 'host_unknown' } });

    await fetch(`${hostsUrl()}/idle/token`, { method: 'POST', headers: authed(router.token, { 'content-type': 'application/json' }), body: '{}' });
    const unlinked = await createSession({ host: 'idle' });
    expect(unlinked.status).toBe(400);
    expect(await unlinked.json()).toMatchObject({ error: { code: 'host_unreachable' } });

    const bad = await createSession({ host: '../etc' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_request' } });
  });

  it('refuses a host credential as a client and a user credential as a host', async () => {
    const sessions = await fetch(`${router.origin}/agents/local/sessions`, { headers: authed(hostToken) });
    expect(sessions.status).toBe(403);
    expect(((await sessions.json()) as { error: { message: string } }).error.message).toContain('host credential');

    const created = await createSession({}, router.token);
    const { attach_url } = (await created.json()) as { attach_url: string };
    expect(await TestClient.refusedStatus(attach_url, { token: hostToken })).toBe(403);
    const a2a = await fetch(`${router.origin}/agents/local/a2a/rest/tasks`, { headers: authed(hostToken) });
    expect(a2a.status).toBe(403);
    const mint = await fetch(`${hostsUrl()}/other/token`, { method: 'POST', headers: authed(hostToken, { 'content-type': 'application/json' }), body: '{}' });
    expect(mint.status).toBe(403);

    // The dev token is a valid user principal: a valid credential, not a host one.
    expect(await TestClient.refusedStatus(linkUrl('laptop2'), { token: router.token, protocols: [HOST_PROTOCOL] })).toBe(403);
    expect(await TestClient.refusedStatus(linkUrl('laptop2'), { token: 'pwhost_not-a-real-one', protocols: [HOST_PROTOCOL] })).toBe(401);
    expect(await TestClient.refusedStatus(linkUrl('laptop2'), { token: null, protocols: [HOST_PROTOCOL] })).toBe(401);
    // laptop's credential is laptop's only.
    expect(await TestClient.refusedStatus(linkUrl('laptop2'), { token: hostToken, protocols: [HOST_PROTOCOL] })).toBe(403);
    expect(await TestClient.refusedStatus(linkUrl('laptop'), { token: hostToken, protocols: ['pty-ws.v1'] })).toBe(400);
  });

  it('revoking the host ends its link with 4401; the host keeps dialing, is refused, and links again with a new credential, its session carrying on', async () => {
    const revoked = await fetch(`${hostsUrl()}/laptop`, { method: 'DELETE', headers: authed(router.token) });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ name: 'laptop', revoked: true, link_ended: true });
    await until(() => /link to the router lost.*"code":4401/.test(host.stderr()), 'the host to see close 4401', 20_000);
    await until(() => /the router refused the link.*"status":401/.test(host.stderr()), 'the host to be refused when it dials again', 20_000);
    expect((await hosts()).find((h) => h.name === 'laptop')).toBeUndefined();
    expect(host.proc.exitCode).toBeNull();
    expect((await fetch(`${hostsUrl()}/laptop`, { method: 'DELETE', headers: authed(router.token) })).status).toBe(404);

    // A new credential in the host's token file: it is read at the next dial.
    writeFileSync(host.tokenFile, await mintWithCli('laptop'));
    await linked('laptop');
    expect(host.stderr()).toMatch(/dialing the router again.*"attempt":2/);
    const a = await TestClient.connect(session.attach_url, { token: router.token });
    await a.join({ role: 'controller' }, { replay_from: 0 });
    await a.waitForOutput('again-5');
    a.send('pty.session_input', { data: b64('echo relinked-$((3*3))\r') });
    await a.waitForOutput('relinked-9');
    a.close();
  }, 90_000);
});

describe('a router restart', () => {
  it('takes up the remote host\'s session when the host links to the new router: its log replayed, what it printed meanwhile logged, typing on', async () => {
    await router.stop();
    const port = String(await freePort());
    const state = tempDir('restart');
    router = await startRouterProcess({ 'state-dir': state, port });
    children.push(router);
    const host = startRemoteHost('vm', await mintWithCli('vm'));
    await linked('vm');
    const created = await createSession({ host: 'vm', command: 'exec /bin/sh' });
    const { session_id, attach_url } = (await created.json()) as { session_id: string; attach_url: string };
    const a = await TestClient.connect(attach_url, { token: router.token });
    await a.join({ role: 'controller' });
    a.send('pty.session_input', { data: b64('echo before-$((4*4))\r') });
    await a.waitForOutput('before-16');

    // Output the program makes while no router is linked: the host holds it, the next router logs it.
    const mark = join(state, 'go');
    a.send('pty.session_input', { data: b64(`while [ ! -e ${mark} ]; do sleep 0.1; done; echo late-$((6*6))\r`) });
    await a.waitForOutput('done; echo late-');
    await router.stop();
    await until(() => host.stderr().includes('link to the router lost'), 'the host to lose its link');
    writeFileSync(mark, '');
    router = await startRouterProcess({ 'state-dir': state, port });
    children.push(router);
    await linked('vm');
    const rec = (await (await fetch(`${router.origin}/agents/local/sessions/${session_id}`, { headers: authed(router.token) })).json()) as Record<string, unknown>;
    expect(rec).toMatchObject({ state: 'running', host: 'vm' });
    const b = await TestClient.connect(attach_url.replace(/:\d+\//, `:${port}/`), { token: router.token });
    await b.join({ role: 'controller' }, { replay_from: 0 });
    await b.waitForOutput('before-16');
    await b.waitForOutput('late-36');
    b.send('pty.session_input', { data: b64('echo after-$((5*5))\r') });
    await b.waitForOutput('after-25');
    b.close();
  }, 180_000);
});

/** Whether `pid` is `ancestor` or below it in the process tree. */
async function descendsFrom(pid: number, ancestor: number): Promise<boolean> {
  for (let p = pid; p > 1; ) {
    if (p === ancestor) return true;
    const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
    p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return false;
}
