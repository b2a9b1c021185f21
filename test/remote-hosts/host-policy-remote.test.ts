// A remote host's own policy against real parts (docs/remote-hosts.md, "The host's policy"): a
// router and remote hosts as separate processes over loopback WebSocket, each host with its own
// --allow-command / --backends. Whatever the router is asked, a host runs only what its policy
// allows, and the refusal reaches the client with its binding code: at REST creation (a backend the
// host does not offer), at a join's first start (Error frame) and over A2A.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { b64, TestClient, type Frame } from '../helpers/client.ts';
import { runCli, startRouterProcess, type Child, type RouterProcess } from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';
import { a2aClient, rejection, send, userText } from '../helpers/a2a.ts';

const dirs: string[] = [];
const children: Child[] = [];
let router: RouterProcess;

const tempDir = (tag: string) => {
  const d = mkdtempSync(join(tmpdir(), `pty-ws-hpolicy-${tag}-`));
  dirs.push(d);
  return d;
};
const authed = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${router.token}`, ...extra });

/** `pty-ws host --connect` with its credential and its own policy flags, once it is linked. */
async function startHost(name: string, policy: string[]): Promise<Child> {
  const minted = await fetch(`${router.origin}/agents/local/hosts/${name}/token`, { method: 'POST', headers: authed({ 'content-type': 'application/json' }), body: '{}' });
  const { token } = (await minted.json()) as { token: string };
  const dir = tempDir(name);
  writeFileSync(join(dir, 'host.token'), token, { mode: 0o600 });
  const host = runCli(['host', '--connect', router.origin, '--name', name, '--token-file', join(dir, 'host.token'), '--state-dir', dir, ...policy], {});
  children.push(host);
  await until(async () => {
    if (host.proc.exitCode !== null) throw new Error(`host ${name} exited: ${host.stderr()}`);
    const res = await fetch(`${router.origin}/agents/local/hosts`, { headers: authed() });
    return ((await res.json()) as { hosts: Array<{ name: string; connected: boolean }> }).hosts.find((h) => h.name === name)?.connected;
  }, `host ${name} to link`, 60_000);
  return host;
}

async function createSession(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${router.origin}/agents/local/sessions`, { method: 'POST', headers: authed({ 'content-type': 'application/json' }), body: JSON.stringify(body) });
}

/** A session on `host` as REST makes it, and the frame its first controller's join ends with. */
async function firstStart(body: Record<string, unknown>, join: Record<string, unknown> = {}): Promise<{ end: Frame; client: TestClient }> {
  const created = await createSession(body);
  expect(created.status).toBe(201);
  const { attach_url } = (await created.json()) as { attach_url: string };
  const client = await TestClient.connect(attach_url, { token: router.token });
  const frames = await client.join({ role: 'controller', ...join });
  return { end: frames.at(-1)!, client };
}

/** The Error frame's code and its reason (the a2a_error's ErrorInfo metadata). */
const refusal = (end: Frame) => {
  const details = (end.payload.a2a_error as { data?: Array<{ metadata?: Record<string, string> }> } | undefined)?.data ?? [];
  return { op: end.op, code: end.payload.code, reason: details.find((d) => d.metadata?.reason)?.metadata?.reason };
};

let ops: Child;

beforeAll(async () => {
  router = await startRouterProcess({ 'state-dir': tempDir('router') });
  children.push(router);
  ops = await startHost('ops', ['--allow-command', '/bin/sh *', '--allow-command', '/bin/echo exact', '--backends', 'native']);
  await startHost('plain', []);
}, 120_000);

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a remote host with --allow-command and --backends', () => {
  it('reports only the backends it offers, and refuses to be placed a session on another (REST 4xx)', async () => {
    const res = await fetch(`${router.origin}/agents/local/hosts`, { headers: authed() });
    const listed = ((await res.json()) as { hosts: Array<{ name: string; backends: string[] }> }).hosts.find((h) => h.name === 'ops');
    expect(listed?.backends).toEqual(['native']);
    // tmux runs on the router's own machine: only the host's choice refuses it.
    const refused = await createSession({ host: 'ops', session_backend: 'tmux', command: 'exec /bin/sh' });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.message).toContain('ops');
    expect(JSON.stringify(body)).toContain('session_backend.not_implemented');
  });

  it('runs an allowed command; a join asking for a backend it does not offer is refused, never run elsewhere', async () => {
    const { client } = await firstStart({ host: 'ops', command: 'cd /; exec /bin/sh' });
    client.send('pty.session_input', { data: b64('echo ops-$((6*7))\r') });
    await client.waitForOutput('ops-42');
    client.close();

    const { end } = await firstStart({ host: 'ops', argv: ['/bin/sh'] }, { session_backend: 'tmux', session_class: 'managed' });
    expect(refusal(end)).toMatchObject({ op: 'Error', code: 'UNSUPPORTED_OPERATION', reason: 'session_backend.not_implemented' });
    expect(ops.stderr()).toMatch(/spawn refused.*backend_unavailable/);
  });

  it('refuses an argv past an exact pattern, another program, loader variables and a cwd with `..`', async () => {
    const exact = await firstStart({ host: 'ops', argv: ['/bin/echo', 'exact'] });
    expect(exact.end.op).not.toBe('Error');
    await exact.client.waitForOutput('exact');
    exact.client.close();

    for (const argv of [['/bin/echo', 'exact', 'more'], ['/bin/echo'], ['/bin/bash', '-c', 'id'], ['echo', 'exact']]) {
      const { end, client } = await firstStart({ host: 'ops', argv });
      expect(refusal(end), JSON.stringify(argv)).toMatchObject({ op: 'Error', code: 'PERMISSION_DENIED', reason: 'host_policy.command_not_allowed' });
      expect(String(end.payload.message)).toContain('host ops');
      client.close();
    }
    const loader = await firstStart({ host: 'ops', command: 'true', env: { LD_PRELOAD: '/tmp/evil.so' } });
    expect(refusal(loader.end)).toMatchObject({ op: 'Error', code: 'INVALID_REQUEST', reason: 'env.refused' });
    const cwd = await firstStart({ host: 'ops', command: 'true', cwd: '/tmp/../root' });
    expect(refusal(cwd.end)).toMatchObject({ op: 'Error', code: 'PERMISSION_DENIED', reason: 'host_policy.command_not_allowed' });
    expect(ops.stderr()).toMatch(/spawn refused.*not_allowed/);
  });
});

describe('a remote host with the default policy: its login shell only', () => {
  it('runs the login shell, also for a session naming none; refuses a command (sh -lc) over REST + join and over A2A', async () => {
    const { end, client } = await firstStart({ host: 'plain', argv: ['/bin/bash'], cwd: '/' });
    expect(end.op).not.toBe('Error');
    client.send('pty.session_input', { data: b64('echo plain-$((3*3))\r') });
    await client.waitForOutput('plain-9');
    client.close();

    // A session that names no program runs the host's login shell, which the host said in its greeting
    // (the router's own default, /bin/sh -l here, is not what this host allows).
    const created = await createSession({ host: 'plain', cwd: '/' });
    const { session_id, attach_url } = (await created.json()) as { session_id: string; attach_url: string };
    const byDefault = await TestClient.connect(attach_url, { token: router.token });
    expect((await byDefault.join({ role: 'controller' })).at(-1)?.op).not.toBe('Error');
    const rec = (await (await fetch(`${router.origin}/agents/local/sessions/${session_id}`, { headers: authed() })).json()) as Record<string, unknown>;
    expect(rec).toMatchObject({ state: 'running', argv: ['/bin/bash', '-l'] });
    byDefault.close();

    const command = await firstStart({ host: 'plain', command: 'id' });
    expect(refusal(command.end)).toMatchObject({ op: 'Error', code: 'PERMISSION_DENIED', reason: 'host_policy.command_not_allowed' });
    expect(String(command.end.payload.message)).toContain('host plain');

    const a2a = await a2aClient(router.origin, router.token, 'JSONRPC');
    const refused = await rejection(a2a.sendMessage(send({ message: userText('id', { metadata: { 'pty-ws/session': { host: 'plain', command: 'id' } } }) })));
    expect(refused.message).toContain('host plain');
    expect(JSON.stringify(refused)).toContain('host_policy.command_not_allowed');
  });
});
