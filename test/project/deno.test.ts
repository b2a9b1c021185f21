// The router on Deno, as a user runs it (`deno task start`), against the Node PTY host it starts,
// a real libSQL file and the `ws` client: hello, join, input, output, replay, binary mode,
// refusals, keepalive and the SIGTERM drain. Deno comes from the npm package `deno` (npm ci); its
// absence fails these tests rather than skipping them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endOrphans } from '../helpers/leftovers.ts';
import { b64, binaryEcho, TestClient } from '../helpers/client.ts';
import { until } from '../helpers/cli.ts';
import { selfSignedCert, type TestCert } from '../helpers/tls.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const DENO = join(ROOT, 'node_modules/.bin/deno');
const DENO_ENV = { DENO_DIR: join(ROOT, '.deno'), DENO_NO_UPDATE_CHECK: '1' };

function requireDeno(): void {
  if (!existsSync(DENO)) throw new Error(`Deno is not installed at ${DENO}: npm ci installs it from the npm package "deno"`);
}

interface DenoRouter extends DenoRun {
  origin: string;
  attachUrl: string;
  /** The printed dev token ('' when tokens come from configuration). */
  token: string;
  /** The PTY host the router started (from its log). */
  hostPid: number;
  /** Kills whatever is left (after a failed test) and removes the temp dir. */
  cleanUp(): Promise<void>;
}

interface DenoRun {
  proc: ChildProcess;
  dir: string;
  stdout(): string;
  stderr(): string;
  exit: Promise<number | null>;
}

/** `deno task start --port 0` with its state in a fresh temp dir (also its HOME). */
function runDenoStart(env: Record<string, string>): DenoRun {
  requireDeno();
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-deno-'));
  let out = '';
  let err = '';
  const proc = spawn(DENO, ['task', 'start', '--port', '0', '--state-dir', join(dir, 'state')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL: '1000', PTY_WS_DEFAULT_SESSION_BACKEND: 'native', ...DENO_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so a failed test can end the task and the router it runs at once.
    detached: true,
  });
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, dir, stdout: () => out, stderr: () => err, exit };
}

async function startDenoRouter(env: Record<string, string> = {}): Promise<DenoRouter> {
  const run = runDenoStart(env);
  const { proc, dir } = run;
  let hostPid = 0;
  const cleanUp = async () => {
    for (const pid of [-proc.pid!, hostPid]) {
      try {
        if (pid) process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    // A PTY host the router restarted (it supervises its host) is not hostPid.
    await endOrphans(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const attachUrl = await until(
      () => /attach URL:\s+(wss?:\/\/\S+)/.exec(run.stdout())?.[1] ?? (proc.exitCode !== null ? Promise.reject(new Error(`deno task start exited ${proc.exitCode}: ${run.stderr()}`)) : undefined),
      'the attach URL',
      60_000,
    );
    const token = /dev token:\s+(\S+)/.exec(run.stdout())?.[1] ?? '';
    const origin = /listening on (https?:\/\/\S+)/.exec(run.stdout())![1]!;
    hostPid = Number(/"msg":"started pty host"[^\n]*"pid":(\d+)/.exec(run.stderr())?.[1]);
    return { ...run, origin, attachUrl, token, hostPid, cleanUp };
  } catch (e) {
    await cleanUp();
    throw e;
  }
}

/** A refused upgrade's status and body (the route's JSON, as on Node). */
function refusedUpgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = get(url.replace(/^ws/, 'http'), { headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('upgrade', () => reject(new Error('upgrade was accepted')));
    req.on('error', reject);
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('deno check', () => {
  it('typechecks the Deno adapter and the core it serves with Deno’s compiler', () => {
    requireDeno();
    const r = spawnSync(DENO, ['check', '--config', join(ROOT, 'deno.json'), join(ROOT, 'src/adapter/deno/main.ts')], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: tmpdir(), ...DENO_ENV }, encoding: 'utf8' });
    expect(r.error).toBeUndefined();
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.status).toBe(0);
  }, 120_000);
});

describe('the router on Deno (deno task start)', () => {
  let router: DenoRouter;
  beforeAll(async () => {
    router = await startDenoRouter();
  }, 90_000);
  afterAll(() => router?.cleanUp());

  it('prints the URLs and a dev token, and the default session answers hello, join and input with output', async () => {
    expect(router.attachUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/agents\/local\/sessions\/[0-9a-f-]{36}\/attach$/);
    expect(router.hostPid).toBeGreaterThan(0);
    expect(alive(router.hostPid)).toBe(true);

    const c = await TestClient.connect(router.attachUrl, { token: router.token });
    expect(c.ws.protocol).toBe('pty-ws.v1');
    const hello = await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    expect(c.frames()[0]!.op).toBe('binding_hello');
    expect(hello.payload).toMatchObject({ binding_version: '1.0.0', payload_mode: { binary: false } });
    const frames = await c.join({ role: 'controller', cols: 100, rows: 30 });
    expect(frames.filter((f) => f.op === 'pty.session_frame').map((f) => f.payload.kind).slice(0, 3)).toEqual(['RoleAssigned', 'MembershipChanged', 'Keyframe']);
    c.send('pty.session_input', { data: b64('echo on-deno-$((40+2))\r') });
    await c.waitForOutput('on-deno-42');
    c.close();
  });

  it('echoes only the PTY token when the bearer travels as a subprotocol entry offered first', async () => {
    const entry = `bearer.${Buffer.from(router.token).toString('base64url')}`;
    const c = await TestClient.connect(router.attachUrl, { token: null, protocols: [entry, 'pty-ws.v1'] });
    expect(c.ws.protocol).toBe('pty-ws.v1');
    await c.waitForFrame((f) => f.op === 'binding_hello', 'hello');
    c.close();
  });

  it('replays what a reconnecting client missed, with the same sequence numbers', async () => {
    const a = await TestClient.connect(router.attachUrl, { token: router.token });
    const joined = await a.join({ role: 'controller' });
    const before = joined.at(-1)!.sequence;
    a.send('pty.session_input', { data: b64('echo replay-$((6*7))\r') });
    await a.waitForOutput('replay-42');
    const liveSeqs = a.frames().filter((f) => f.payload.kind === 'Output').map((f) => f.sequence);
    a.close();
    await a.waitForClose();

    const b = await TestClient.connect(router.attachUrl, { token: router.token });
    await b.join({ role: 'observer' }, { replay_from: before });
    expect(b.output()).toContain('replay-42');
    const replayed = b.frames().filter((f) => f.payload.kind === 'Output').map((f) => f.sequence);
    expect(replayed.slice(0, liveSeqs.length)).toEqual(liveSeqs);
    b.close();
  });

  it('speaks pty-ws.v1.binary: PW1I input in, PW1O output out', async () => {
    const { client: c, hello, pw1o: bins } = await binaryEcho(router.attachUrl, router.token);
    expect(c.ws.protocol).toBe('pty-ws.v1.binary');
    expect(hello.payload.payload_mode).toMatchObject({ binary: true });
    expect(bins.length).toBeGreaterThan(0);
    for (const b of bins) expect(b.subarray(0, 4).toString()).toBe('PW1O');
    c.close();
  });

  it('refuses a bad bearer (401), a subprotocol header without a PTY token (400) and a token in the query (400)', async () => {
    expect(await TestClient.refusedStatus(router.attachUrl, { token: 'not-the-token' })).toBe(401);
    expect(await TestClient.refusedStatus(router.attachUrl, { token: router.token, protocols: ['chat'] })).toBe(400);
    expect(await TestClient.refusedStatus(`${router.attachUrl}?token=${router.token}`, { token: router.token })).toBe(400);
    expect(await refusedUpgrade(router.attachUrl, { 'sec-websocket-protocol': 'pty-ws.v1', authorization: 'Bearer not-the-token' })).toEqual({
      status: 401,
      body: { error: { code: 'unauthenticated', message: 'unknown bearer token' } },
    });
  });

  it('closes a connection whose message is over 1 MiB with 1009, and only that one', async () => {
    const big = await TestClient.connect(router.attachUrl, { token: router.token });
    const other = await TestClient.connect(router.attachUrl, { token: router.token });
    await other.join({ role: 'observer' });
    big.sendRaw('x'.repeat(1024 * 1024 + 1));
    expect((await big.waitForClose()).code).toBe(1009);
    const id = other.send('ping', { client_ts: 'still-here' });
    await other.waitForFrame((f) => f.op === 'pong' && f.id === id, 'pong on the other connection');
    other.close();
  });

  it('serves REST, readiness and metrics', async () => {
    const auth = { authorization: `Bearer ${router.token}` };
    const list = await fetch(`${router.origin}/agents/local/sessions`, { headers: auth });
    expect(list.status).toBe(200);
    expect(JSON.stringify(await list.json())).toContain(/sessions\/([0-9a-f-]{36})\//.exec(router.attachUrl)![1]);
    const ready = await fetch(`${router.origin}/readyz`);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', pty_host: 'ok' } });
    const metrics = await (await fetch(`${router.origin}/metrics`, { headers: auth })).text();
    expect(metrics).toMatch(/^pty_ws_frames_in_total\{kind="text"\} [1-9]/m);
    expect(metrics).toMatch(/^pty_ws_attached_clients/m);
  });

  it('drains on SIGTERM: goodbye and close 1000 to every client, the PTY host stopped, exit 0', async () => {
    const c = await TestClient.connect(router.attachUrl, { token: router.token });
    await c.join({ role: 'controller' });
    router.proc.kill('SIGTERM');
    const bye = await c.waitForFrame((f) => f.op === 'binding_goodbye', 'goodbye');
    expect(bye.payload).toEqual({ reason: 'server_shutdown' });
    expect((await c.waitForClose()).code).toBe(1000);
    expect(await router.exit).toBe(0);
    await until(() => !alive(router.hostPid), 'the PTY host to exit');
    expect(existsSync(join(router.dir, 'state', 'pty-host.sock'))).toBe(false);
    expect(router.stderr()).toContain('SIGTERM: shutting down');
    expect(router.stderr()).not.toContain(router.token);
  }, 30_000);
});

/** The environment a process started with, as NAME=value lines. */
function environOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').filter(Boolean);
}

describe('the PTY host of the Deno router', () => {
  const SECRET = `deno-secret-${process.pid}`;
  let router: DenoRouter;
  beforeAll(async () => {
    router = await startDenoRouter({ PTY_WS_DATABASE_AUTH_TOKEN: SECRET, PTY_WS_LOG_LEVEL: 'info' });
  }, 90_000);
  afterAll(() => router?.cleanUp());

  it('starts with the router environment minus every PTY_WS_ setting (its own come as arguments)', () => {
    const env = environOf(router.hostPid);
    expect(env.some((l) => l.startsWith('PATH='))).toBe(true);
    expect(env.filter((l) => l.startsWith('PTY_WS_'))).toEqual([]);
    expect(env.join('\n')).not.toContain(SECRET);
  });

  it('is restarted when it dies, and the router serves new sessions on the new one', async () => {
    const first = router.hostPid;
    process.kill(first, 'SIGKILL');
    const second = await until(() => {
      const pids = [...router.stderr().matchAll(/"msg":"started pty host"[^\n]*"pid":(\d+)/g)].map((m) => Number(m[1]));
      return pids.find((p) => p !== first);
    }, 'a new PTY host', 30_000);
    expect(alive(second)).toBe(true);
    expect(environOf(second).join('\n')).not.toContain(SECRET);
    await until(async () => (await fetch(`${router.origin}/readyz`)).status === 200, 'ready again', 30_000);
    const res = await fetch(`${router.origin}/agents/local/sessions`, { method: 'POST', headers: { authorization: `Bearer ${router.token}`, 'content-type': 'application/json' }, body: '{}' });
    const { attach_url: url } = (await res.json()) as { attach_url: string };
    const c = await TestClient.connect(url, { token: router.token });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo back-$((6*7))\r') });
    await c.waitForOutput('back-42');
    c.close();
  }, 60_000);
});

describe('keepalive on Deno, as on Node', () => {
  let router: DenoRouter;
  beforeAll(async () => {
    router = await startDenoRouter({ PTY_WS_PING_INTERVAL_MS: '1500', PTY_WS_PONG_TIMEOUT_MS: '4000' });
  }, 90_000);
  afterAll(() => router?.cleanUp());

  it('pings every interval, a client that keeps talking too', async () => {
    const talker = new WebSocket(router.attachUrl, ['pty-ws.v1'], { headers: { authorization: `Bearer ${router.token}` } });
    let pings = 0;
    talker.on('ping', () => pings++);
    await new Promise<void>((resolve, reject) => {
      talker.once('open', () => resolve());
      talker.once('error', reject);
    });
    // A frame every 200 ms: Deno's own idle timer would never see silence, and never ping.
    const chatter = setInterval(() => talker.send(JSON.stringify({ op: 'ping', id: `c${Date.now()}`, ts: new Date().toISOString(), payload: {} })), 200);
    await new Promise((r) => setTimeout(r, 5_000));
    clearInterval(chatter);
    expect(pings).toBeGreaterThanOrEqual(2);
    expect(talker.readyState).toBe(WebSocket.OPEN);
    talker.close();
  }, 30_000);

  it('reaps a client that stops answering Pings with close 1011 and releases its role; one that answers stays', async () => {
    const mute = new WebSocket(router.attachUrl, ['pty-ws.v1'], { headers: { authorization: `Bearer ${router.token}` }, autoPong: false });
    let pinged = false;
    mute.on('ping', () => (pinged = true));
    const closed = new Promise<{ code: number; reason: string }>((resolve) => mute.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    await new Promise<void>((resolve, reject) => {
      mute.once('open', () => resolve());
      mute.once('error', reject);
    });
    mute.send(JSON.stringify({ op: 'pty.join_session', id: 'mute-join', ts: new Date().toISOString(), payload: { role: 'controller', client_label: 'mute' } }));

    const alive2 = await TestClient.connect(router.attachUrl, { token: router.token });
    await alive2.join({ role: 'observer', client_label: 'answers' });
    await alive2.waitForFrame((f) => f.payload.kind === 'MembershipChanged' && JSON.stringify(f.payload.controllers).includes('mute'), 'the mute controller in the membership');

    expect(await closed).toEqual({ code: 1011, reason: 'no Pong within 4000 ms' });
    expect(pinged).toBe(true);
    await alive2.waitForFrame((f) => f.payload.kind === 'MembershipChanged' && !JSON.stringify(f.payload).includes('mute'), 'the mute controller gone from the membership');
    // Well past the Pong timeout, the client that answers Pings is still attached.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(alive2.closed).toBeNull();
    const id = alive2.send('ping', { client_ts: 'still-here' });
    await alive2.waitForFrame((f) => f.op === 'pong' && f.id === id, 'pong');
    alive2.close();
  }, 30_000);
});

describe('token map on Deno', () => {
  let router: DenoRouter;
  let dir: string;
  const entry = (token: string, principal: string) => ({ sha256: createHash('sha256').update(token).digest('hex'), principal, scopes: ['pty:control'] });
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pty-ws-deno-tokens-'));
    writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ tokens: [entry('token-a', 'a')] }));
    router = await startDenoRouter({ PTY_WS_TOKENS_FILE: join(dir, 'tokens.json') });
  }, 90_000);
  afterAll(async () => {
    await router?.cleanUp();
    rmSync(dir, { recursive: true, force: true });
  });

  it('re-reads the token map on SIGHUP', async () => {
    const status = async (token: string) => (await fetch(`${router.origin}/agents/local/sessions`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect(router.token).toBe('');
    expect([await status('token-a'), await status('token-b')]).toEqual([200, 401]);
    writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ tokens: [entry('token-b', 'b')] }));
    router.proc.kill('SIGHUP');
    await until(async () => (await status('token-b')) === 200, 'token-b to be accepted');
    expect(await status('token-a')).toBe(401);
    expect(router.stderr()).toContain('token map reloaded');
  });
});

describe('TLS on Deno', () => {
  let router: DenoRouter;
  let certDir: string;
  let cert: TestCert;
  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), 'pty-ws-deno-tls-'));
    cert = selfSignedCert(certDir);
    router = await startDenoRouter({ PTY_WS_TLS_CERT: cert.certFile, PTY_WS_TLS_KEY: cert.keyFile });
  }, 90_000);
  afterAll(async () => {
    await router?.cleanUp();
    rmSync(certDir, { recursive: true, force: true });
  });

  it('serves https and wss from the certificate files', async () => {
    expect(router.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(router.attachUrl).toMatch(/^wss:\/\//);
    const c = await TestClient.connect(router.attachUrl, { token: router.token, ca: cert.cert });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo tls-$((6*7))\r') });
    await c.waitForOutput('tls-42');
    c.close();
  });

  it('refuses to start with a file that is not a certificate, naming the settings (exit 2)', async () => {
    const junk = join(certDir, 'junk.pem');
    writeFileSync(junk, 'not a certificate\n');
    const run = runDenoStart({ PTY_WS_TLS_CERT: junk, PTY_WS_TLS_KEY: junk });
    try {
      expect(await run.exit).toBe(2);
      expect(run.stderr()).toMatch(/PTY_WS_TLS_CERT .*junk\.pem .*not a usable certificate and key pair/);
    } finally {
      rmSync(run.dir, { recursive: true, force: true });
    }
  }, 60_000);
});
