// Which sessions take file transfer (docs/files.md, routes/file-directory.ts), against a real router
// process, its PTY host and real directories: a shell session's working directory while it runs;
// never a session of another program (it could not `cat` the file there), never one that ended or
// is being deleted, and never a directory the server would pick for a session that names none
// (the router's HOME). A refusal touches nothing on disk.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouterProcess, until, type RouterProcess } from '../helpers/processes.ts';

let dir: string;
let home: string;
let router: RouterProcess;

const b64 = (s: string) => Buffer.from(s).toString('base64');

function call(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${router.token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${router.origin}/agents/local/sessions${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

const upload = (id: string, name: string) => call('POST', `/${id}/files`, { name, content_base64: b64(`${name}\n`) });
const download = (id: string, name: string) => call('GET', `/${id}/files/${name}`);

/** The refusal's status and error code. */
async function refusal(res: Promise<Response>): Promise<string> {
  const r = await res;
  return `${r.status} ${((await r.json()) as { error?: { code?: string } }).error?.code}`;
}

/** A fresh directory holding `seed.txt`: the session's cwd. */
function workDir(name: string): string {
  const work = join(dir, name);
  mkdirSync(work);
  writeFileSync(join(work, 'seed.txt'), 'seed\n');
  return work;
}

/** Creates a session and starts its program with a controller's join; the socket stays open. */
async function started(body: Record<string, unknown>): Promise<{ id: string; ws: WebSocket }> {
  const { session_id: id } = await router.createSession(body);
  const ws = new WebSocket(router.attachUrl(id), ['pty-ws.v1'], { headers: { authorization: `Bearer ${router.token}` } });
  const frames: Array<{ id?: string; payload: { kind?: string } }> = [];
  ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString()) as (typeof frames)[number]));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ op: 'pty.join_session', id: 'start', ts: new Date().toISOString(), payload: { role: 'controller' } }));
  await until(() => frames.some((f) => f.id === 'start' && f.payload.kind === 'Keyframe'), 'the join Keyframe');
  return { id, ws };
}

const state = async (id: string) => ((await (await call('GET', `/${id}`)).json()) as { state: string }).state;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-files-sessions-'));
  home = join(dir, 'home');
  mkdirSync(home);
  router = await startRouterProcess({ 'state-dir': join(dir, 'state') }, { HOME: home, PTY_WS_DEFAULT_SHELL: '/bin/sh' });
}, 60_000);

afterAll(async () => {
  await router?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('which sessions take file transfer', { timeout: 60_000 }, () => {
  it('a shell session: its working directory, while it runs, whether its shell is the default, an argv or a command', async () => {
    for (const [name, spec] of [
      ['default', {}],
      ['argv', { argv: ['bash', '--noprofile', '--norc'] }],
      ['command', { command: 'exec bash --noprofile --norc' }],
    ] as const) {
      const work = workDir(`shell-${name}`);
      const { id, ws } = await started({ ...spec, cwd: work });
      const up = await upload(id, 'up.txt');
      expect(up.status, `${name}: ${await up.clone().text()}`).toBe(201);
      expect(await up.json()).toEqual({ name: 'up.txt', directory: work, bytes: 7 });
      expect(await (await download(id, 'seed.txt')).text(), name).toBe('seed\n');
      ws.close();
    }
  });

  it('not a session of another program (`top`, a REPL): nothing read, nothing written', async () => {
    for (const [name, spec] of [
      ['argv', { argv: ['cat'] }],
      ['command', { command: 'sleep 3600' }],
      ['shell -c', { argv: ['/bin/sh', '-c', 'exec cat'] }],
      ['script', { argv: ['bash', 'script.sh'] }],
      ['shell then more', { command: 'bash; cat' }],
    ] as const) {
      const work = workDir(`program-${name.replace(/\W/g, '-')}`);
      const { session_id: id } = await router.createSession({ ...spec, cwd: work });
      expect(await refusal(upload(id, 'up.txt')), name).toBe('403 files.not_a_shell');
      expect(await refusal(download(id, 'seed.txt')), name).toBe('403 files.not_a_shell');
      expect(readdirSync(work), name).toEqual(['seed.txt']);
    }
    // Running, too.
    const work = workDir('program-running');
    const { id, ws } = await started({ argv: ['cat'], cwd: work });
    expect(await refusal(upload(id, 'up.txt'))).toBe('403 files.not_a_shell');
    expect(await refusal(download(id, 'seed.txt'))).toBe('403 files.not_a_shell');
    expect(readdirSync(work)).toEqual(['seed.txt']);
    ws.close();
  });

  it('not a session being deleted, nor one that ended: 409 before the filesystem is touched', async () => {
    const work = workDir('deleted');
    const { id, ws } = await started({ argv: ['bash', '--noprofile', '--norc'], cwd: work });
    expect((await upload(id, 'before.txt')).status).toBe(201);
    const deleted = await call('DELETE', `/${id}`);
    expect([200, 202]).toContain(deleted.status);
    // Right away, while its process may still be going, and once it has ended.
    expect(await refusal(upload(id, 'after.txt'))).toBe('409 files.session_ended');
    expect(await refusal(download(id, 'seed.txt'))).toBe('409 files.session_ended');
    await until(async () => (await state(id)) === 'closed' || undefined, 'the session to end');
    expect(await refusal(upload(id, 'after.txt'))).toBe('409 files.session_ended');
    expect(await refusal(download(id, 'before.txt'))).toBe('409 files.session_ended');
    expect(readdirSync(work).sort()).toEqual(['before.txt', 'seed.txt']);
    ws.close();

    // Deleted before it ever started.
    const never = workDir('never-started');
    const { session_id: unstarted } = await router.createSession({ cwd: never });
    await call('DELETE', `/${unstarted}`);
    expect(await refusal(upload(unstarted, 'after.txt'))).toBe('409 files.session_ended');
    expect(readdirSync(never)).toEqual(['seed.txt']);

    // Its shell exited on its own.
    const exited = workDir('exited');
    const shell = await started({ argv: ['bash', '--noprofile', '--norc'], cwd: exited });
    shell.ws.send(JSON.stringify({ op: 'pty.session_input', id: 'exit', ts: new Date().toISOString(), payload: { data: b64('exit\r') } }));
    await until(async () => (await state(shell.id)) === 'closed' || undefined, 'the shell to exit');
    expect(await refusal(upload(shell.id, 'after.txt'))).toBe('409 files.session_ended');
    expect(await refusal(download(shell.id, 'seed.txt'))).toBe('409 files.session_ended');
    expect(readdirSync(exited)).toEqual(['seed.txt']);
    shell.ws.close();
  });

  it("not the router's HOME for a session that names no directory and has not started", async () => {
    writeFileSync(join(home, 'secret.txt'), 'secret\n');
    const { session_id: id } = await router.createSession({});
    expect(await refusal(upload(id, 'planted.txt'))).toBe('409 files.no_directory');
    const read = await download(id, 'secret.txt');
    expect(read.status).toBe(409);
    expect(await read.text()).not.toContain('secret\n');
    expect(existsSync(join(home, 'planted.txt'))).toBe(false);
  });
});
