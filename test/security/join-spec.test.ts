// Security item 1 (docs/security.md): a join's process-start fields are a control act. Against the
// real router, PTY host and shell: an observe-only token tries to start its own program on a
// session someone else created (argv, command, cwd, env with LD_PRELOAD), another controller tries
// to replace the creator's command, and the server's own default session is attacked the same way.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, type Frame } from '../helpers/client.ts';
import { startTestServer, stopWithMultiplexers, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';
import { until } from '../helpers/wait.ts';

const alice: TestToken = { token: newToken(), principal: 'alice', scopes: ['pty:control'] };
const olga: TestToken = { token: newToken(), principal: 'olga', scopes: ['pty:observe'] };
const bob: TestToken = { token: newToken(), principal: 'bob', scopes: ['pty:control'] };
const root: TestToken = { token: newToken(), principal: 'root', scopes: ['pty:admin'] };

let dir: string;
let server: TestServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-join-spec-'));
  writeTokenFile(join(dir, 'tokens.json'), [alice, olga, bob, root]);
  server = await startTestServer({ PTY_WS_TOKENS_FILE: join(dir, 'tokens.json') });
});
afterAll(async () => {
  if (server) await stopWithMultiplexers(server);
  rmSync(dir, { recursive: true, force: true });
});

async function record(id: string, token = alice.token): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.origin}/agents/${server.config.instanceId}/sessions/${id}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function joinResult(url: string, token: string, payload: Record<string, unknown>): Promise<{ client: TestClient; end: Frame; frames: Frame[] }> {
  const client = await TestClient.connect(url, { token });
  await client.waitForFrame((f) => f.op === 'binding_hello', 'hello');
  const frames = await client.join(payload);
  return { client, end: frames[frames.length - 1]!, frames };
}

/** Output printed while the join starts the process reaches the joiner folded into its Keyframe. */
const shows = (c: TestClient, text: string) => c.waitFor(() => (c.output() + c.screen()).includes(text), `"${text}" on screen or in Output`);

const ATTACKS: Array<[string, Record<string, unknown>]> = [
  ['argv', { argv: ['/bin/sh', '-c', 'echo pwned-$((6*7)); sleep 30'] }],
  ['command', { command: 'echo pwned-$((6*7)); sleep 30' }],
  ['cwd', { cwd: '/' }],
  ['env', { env: { LD_PRELOAD: '/tmp/evil.so' } }],
  ['session_backend', { session_backend: 'tmux' }],
];

describe('process-start fields on pty.join_session', () => {
  it('an observe-only token can start no program of its own: each field is PERMISSION_DENIED, nothing starts', async () => {
    const s = await server.createSession({ command: 'echo created-by-alice-$((1+1)); sleep 30' }, alice.token);
    for (const [field, fields] of ATTACKS) {
      const { client, end } = await joinResult(s.attach_url, olga.token, { role: 'observer', ...fields });
      expect(end.op, field).toBe('Error');
      expect(end.payload, field).toMatchObject({ code: 'PERMISSION_DENIED', a2a_error: { data: [{ reason: 'PERMISSION_DENIED' }] } });
      expect(String(end.payload.message), field).toMatch(/pty:observe/);
      expect(client.output(), field).not.toContain('pwned-42');
      client.close();
    }
    // Nothing ran and the record still shows what alice asked for.
    expect(await record(s.session_id)).toMatchObject({ state: 'created', command: 'echo created-by-alice-$((1+1)); sleep 30' });

    // Watching without the fields starts the creator's program, not the observer's.
    const { client, end } = await joinResult(s.attach_url, olga.token, { role: 'observer' });
    expect(end.payload.kind).toBe('Keyframe');
    await shows(client, 'created-by-alice-2');
    const rec = await record(s.session_id);
    expect(rec).toMatchObject({ state: 'running', argv: ['/bin/sh', '-lc', 'echo created-by-alice-$((1+1)); sleep 30'] });
    client.close();
  });

  it("another controller cannot replace the creator's program before it starts; the creator and pty:admin may", async () => {
    const s = await server.createSession({ command: 'echo mine; sleep 30' }, alice.token);
    for (const [field, fields] of ATTACKS) {
      const { client, end } = await joinResult(s.attach_url, bob.token, { role: 'controller', ...fields });
      expect(end.op, field).toBe('Error');
      expect(end.payload, field).toMatchObject({ code: 'PERMISSION_DENIED' });
      expect(String(end.payload.message), field).toMatch(/created by principal "alice"/);
      client.close();
    }
    expect((await record(s.session_id)).state).toBe('created');

    // The creator may change her own session before it starts.
    const own = await joinResult(s.attach_url, alice.token, { role: 'controller', command: 'echo changed-by-$((0+1))-owner; sleep 30' });
    expect(own.end.payload.kind).toBe('Keyframe');
    await shows(own.client, 'changed-by-1-owner');
    own.client.close();

    const t = await server.createSession({}, alice.token);
    const admin = await joinResult(t.attach_url, root.token, { role: 'controller', argv: ['/bin/sh', '-c', 'echo admin-$((2+2)); sleep 30'] });
    expect(admin.end.payload.kind).toBe('Keyframe');
    await shows(admin.client, 'admin-4');
    admin.client.close();
  });

  it('empty backend fields ask for nothing: an observer or another controller starts the backend the creator chose', async () => {
    // An empty string passed the check as "not asked" but reached the start as a name, which
    // chose the server's default backend: a switch the check would have refused.
    for (const [who, role] of [
      [olga, 'observer'],
      [bob, 'controller'],
    ] as const) {
      for (const empty of [{ session_backend: '', session_class: '' }, { backend: '', session_class: '' }]) {
        const s = await server.createSession({ command: 'echo in-tmux-$((3+3)); sleep 30', session_backend: 'tmux' }, alice.token);
        expect(await record(s.session_id)).toMatchObject({ state: 'created', session_backend: 'tmux' });
        const { client, end } = await joinResult(s.attach_url, who.token, { role, ...empty });
        expect(end.payload.kind, `${who.principal} ${JSON.stringify(empty)}`).toBe('Keyframe');
        await shows(client, 'in-tmux-6');
        expect(await record(s.session_id), `${who.principal} ${JSON.stringify(empty)}`).toMatchObject({ state: 'running', session_backend: 'tmux' });
        client.close();
      }
    }
  });

  it("once started, a join's process-start fields are ignored and listed in RoleAssigned.ignored_fields (DECISIONS §20)", async () => {
    const s = await server.createSession({ argv: ['/bin/sh', '-c', 'echo started; sleep 30'], cwd: '/tmp', env: { FOO: 'bar' } }, alice.token);
    const first = await joinResult(s.attach_url, alice.token, { role: 'controller' });
    await shows(first.client, 'started');
    expect(first.frames.find((f) => f.payload.kind === 'RoleAssigned')!.payload.ignored_fields).toBeUndefined();
    // Any principal, observe-only included: the fields cannot change what runs, so they refuse nothing.
    for (const [who, fields] of [
      [alice, { argv: ['/bin/sh'], cwd: '/', env: { FOO: 'baz' } }],
      [bob, { command: 'id', working_dir: '/root' }],
      [olga, { argv: ['/usr/bin/id'], env: { LD_PRELOAD: '/tmp/evil.so' } }],
    ] as const) {
      const other = await joinResult(s.attach_url, who.token, { role: 'observer', ...fields });
      expect(other.end.payload.kind, who.principal).toBe('Keyframe');
      const role = other.frames.find((f) => f.payload.kind === 'RoleAssigned')!;
      expect(role.payload, who.principal).toMatchObject({ role: 'observer' });
      expect([...(role.payload.ignored_fields as string[])].sort(), who.principal).toEqual(Object.keys(fields).sort());
      other.client.close();
    }
    expect(await record(s.session_id)).toMatchObject({ argv: ['/bin/sh', '-c', 'echo started; sleep 30'], cwd: '/tmp' });
    first.client.close();
  });

  it("binding §5.1.1's own example join works on a running session; a backend other than its own is still refused", async () => {
    const s = await server.createSession({}, alice.token);
    const first = await joinResult(s.attach_url, alice.token, { role: 'controller' });
    expect(first.end.payload.kind).toBe('Keyframe');
    const example = { session_backend: 'native', session_class: 'direct', argv: ['/bin/bash', '-l'], cwd: '/workspace', env: { TERM: 'xterm-256color' }, terminal_size: { cols: 132, rows: 43 } };
    const joined = await joinResult(s.attach_url, bob.token, { role: 'observer', ...example });
    expect(joined.end.payload.kind).toBe('Keyframe');
    expect(joined.frames.find((f) => f.payload.kind === 'RoleAssigned')!.payload).toMatchObject({ role: 'observer', ignored_fields: ['argv', 'cwd', 'env'] });
    joined.client.close();
    const other = await joinResult(s.attach_url, bob.token, { role: 'observer', ...example, session_backend: 'tmux', session_class: 'managed' });
    expect(other.end.payload).toMatchObject({ code: 'INVALID_REQUEST', a2a_error: { data: [{ metadata: { reason: 'session_backend.mismatch' } }] } });
    other.client.close();
    first.client.close();
  });

  it('an ended session: a backend this server does not run is session_backend.not_implemented, process-start fields are ignored', async () => {
    const s = await server.createSession({ command: 'echo bye' }, alice.token);
    const first = await joinResult(s.attach_url, alice.token, { role: 'controller' });
    await first.client.waitForClose();
    await until(async () => (await record(s.session_id)).state === 'closed', 'the session to end');
    const unsupported = await joinResult(s.attach_url, alice.token, { role: 'observer', session_backend: 'zellij' });
    expect(unsupported.end.payload).toMatchObject({ code: 'UNSUPPORTED_OPERATION', reason: 'session_backend.not_implemented' });
    unsupported.client.close();
    const ended = await TestClient.connect(s.attach_url, { token: bob.token });
    await ended.join({ role: 'observer', command: 'id', env: { A: 'b' } });
    await ended.waitForClose();
    expect(ended.frames().find((f) => f.payload.kind === 'RoleAssigned')!.payload).toMatchObject({ role: 'observer', ignored_fields: ['command', 'env'] });
  });

  it("the server's default session: binding §5.1.1's example join works, and a control token cannot choose what it runs", async () => {
    const list = (await (await fetch(`${server.origin}/agents/${server.config.instanceId}/sessions`, { headers: { authorization: `Bearer ${alice.token}` } })).json()) as {
      sessions: Array<{ session_id: string; state: string }>;
    };
    const def = list.sessions[0]!;
    expect(def.state).toBe('created');
    // The first joiner starts it: its argv (and the rest) are ignored, named in RoleAssigned, and
    // the session runs the server's shell, in the server's directory.
    const example = { session_backend: 'native', session_class: 'direct', argv: ['/usr/bin/id'], cwd: '/workspace', env: { TERM: 'xterm-256color', LD_PRELOAD: '/tmp/evil.so' }, terminal_size: { cols: 132, rows: 43 } };
    const { client, end, frames } = await joinResult(server.attachUrl(def.session_id), alice.token, { role: 'controller', ...example });
    expect(end.payload.kind).toBe('Keyframe');
    expect(frames.find((f) => f.payload.kind === 'RoleAssigned')!.payload).toMatchObject({ role: 'controller', ignored_fields: ['argv', 'cwd', 'env'] });
    const started = await record(def.session_id);
    expect(started.state).toBe('running');
    expect(started.argv).toEqual(server.config.defaultShell.split(' '));
    expect(JSON.stringify(started)).not.toContain('LD_PRELOAD');
    client.send('pty.session_input', { data: Buffer.from('echo "[$LD_PRELOAD]-$((2+3))"\n').toString('base64') });
    await client.waitForOutput('[]-5');
    expect(client.output()).not.toContain('uid=');
    // A backend other than its own is still refused.
    const other = await joinResult(server.attachUrl(def.session_id), bob.token, { role: 'observer', ...example, session_backend: 'tmux', session_class: 'managed' });
    expect(other.end.payload).toMatchObject({ code: 'INVALID_REQUEST', a2a_error: { data: [{ metadata: { reason: 'session_backend.mismatch' } }] } });
    other.client.close();
    client.close();
  });
});

describe('an observe-only principal asking for controller', () => {
  it('gets PERMISSION_DENIED and no role, in pty.join_session and pty.request_role; it may join again as observer', async () => {
    const s = await server.createSession({}, alice.token);
    const asked = await joinResult(s.attach_url, olga.token, { role: 'controller' });
    expect(asked.end.op).toBe('Error');
    expect(asked.end.payload).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(asked.frames.some((f) => f.payload.kind === 'RoleAssigned')).toBe(false);
    // The refusal is not fatal: the same connection joins as an observer.
    const again = await asked.client.join({ role: 'observer' });
    expect(again.find((f) => f.payload.kind === 'RoleAssigned')!.payload).toMatchObject({ role: 'observer' });
    const id = asked.client.send('pty.request_role', { role: 'controller' });
    const denied = await asked.client.waitForFrame((f) => f.id === id, 'request_role answer');
    expect(denied.payload).toMatchObject({ code: 'PERMISSION_DENIED' });
    asked.client.close();
  });
});

describe('DELETE of a session that never started', () => {
  it('ends it at once: 200 closed, a later join sees it ended and starts nothing', async () => {
    const s = await server.createSession({ command: 'echo should-not-run-$((3*3)); sleep 30' }, alice.token);
    const res = await fetch(`${server.origin}/agents/${server.config.instanceId}/sessions/${s.session_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${alice.token}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ terminated: true, state: 'closed' });
    expect(await record(s.session_id)).toMatchObject({ state: 'closed', close_reason: 'killed', argv: null });

    const late = await TestClient.connect(s.attach_url, { token: alice.token });
    await late.join({ role: 'controller' });
    await late.waitForClose();
    const closed = late.frames().find((f) => f.payload.kind === 'Closed');
    expect(closed?.payload).toMatchObject({ reason: 'killed', exit_code: null });
    expect(late.frames().find((f) => f.payload.kind === 'RoleAssigned')!.payload.role).toBe('observer');
    expect(late.output() + late.screen()).not.toContain('should-not-run-9');
    expect((await record(s.session_id)).argv).toBeNull();
  });
});
