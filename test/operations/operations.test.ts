// Operating the server: metrics that move, readiness that tells the truth, an orderly SIGTERM.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import { afterEach, describe, expect, it } from 'vitest';
import { b64, TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { readLogRows } from '../helpers/log-rows.ts';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

function metricValue(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('GET /metrics', () => {
  it('needs a bearer, and its counters move when a client attaches and types', async () => {
    server = await startTestServer();
    const url = `${server.origin}/metrics`;
    expect((await fetch(url)).status).toBe(401);
    const scrape = async () => (await fetch(url, { headers: { authorization: `Bearer ${server!.devToken}` } })).text();
    const before = await scrape();

    const c = await TestClient.connect(server.attachUrl(server.defaultSession!.id), { token: server.devToken });
    await c.join({ role: 'controller' });
    c.send('pty.session_input', { data: b64('echo metrics-$((20+1))\r') });
    await c.waitForOutput('metrics-21');
    const after = await scrape();

    expect(metricValue(after, 'pty_ws_frames_in_total', 'kind="text"')).toBeGreaterThan(metricValue(before, 'pty_ws_frames_in_total', 'kind="text"'));
    expect(metricValue(after, 'pty_ws_frames_out_total', 'kind="text"')).toBeGreaterThan(metricValue(before, 'pty_ws_frames_out_total', 'kind="text"'));
    expect(metricValue(after, 'pty_ws_pty_output_bytes_total')).toBeGreaterThan(0);
    expect(metricValue(after, 'pty_ws_attached_clients', 'role="controller"')).toBe(1);
    expect(metricValue(after, 'pty_ws_sessions', 'state="running",backend="native"')).toBe(1);
    expect(metricValue(after, 'pty_ws_keyframes_total', 'occasion="join"')).toBeGreaterThanOrEqual(1);
    expect(after).toContain('pty_ws_keyframe_build_seconds_bucket');
    expect(after).toContain('pty_ws_pty_host_rtt_seconds');

    expect(await TestClient.refusedStatus(server.attachUrl('01900000-0000-7000-8000-000000000000'), { token: server.devToken! })).toBe(404);
    expect(metricValue(await scrape(), 'pty_ws_upgrade_rejections_total', 'status="404"')).toBeGreaterThanOrEqual(1);
  });
});

describe('GET /healthz and /readyz', () => {
  it('readyz fails, naming the PTY host, when the host is gone; healthz stays alive', async () => {
    server = await startTestServer();
    expect((await fetch(`${server.origin}/readyz`)).status).toBe(200);
    process.kill(server.ptyHostPid()!, 'SIGKILL');
    const deadline = Date.now() + 10_000;
    let res = await fetch(`${server.origin}/readyz`);
    while (res.status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      res = await fetch(`${server.origin}/readyz`);
    }
    expect(res.status).toBe(503);
    expect(((await res.json()) as { checks: Record<string, string> }).checks).toMatchObject({ database: 'ok', pty_host: expect.not.stringMatching(/^ok$/) });
    expect((await fetch(`${server.origin}/healthz`)).status).toBe(200);
  });

  it('readyz reports each check, and a PTY host that hangs is not ready within its probe time; healthz stays alive', async () => {
    server = await startTestServer();
    const ready = await fetch(`${server.origin}/readyz`);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', pty_host: 'ok' } });
    const hostPid = server.ptyHostPid()!;
    // Stopped, not dead: its socket stays open and nothing answers on it.
    process.kill(hostPid, 'SIGSTOP');
    try {
      const res = await fetch(`${server.origin}/readyz`, { signal: AbortSignal.timeout(5_000) });
      expect(res.status).toBe(503);
      const body = (await res.json()) as { status: string; checks: Record<string, string> };
      expect(body.status).toBe('unavailable');
      expect(body.checks.database).toBe('ok');
      expect(body.checks.pty_host).toMatch(/did not answer within/);
      expect((await fetch(`${server.origin}/healthz`, { signal: AbortSignal.timeout(2_000) })).status).toBe(200);
    } finally {
      process.kill(hostPid, 'SIGCONT');
    }
    const deadline = Date.now() + 15_000;
    while ((await fetch(`${server.origin}/readyz`)).status !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`${server.origin}/readyz`)).status).toBe(200);
  });
});

describe('SIGTERM', () => {
  it('gives every client binding_goodbye and close 1000, and the log holds every frame sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pty-ws-ops-'));
    try {
      const proc = spawn(process.execPath, [new URL('../../bin/pty-ws.js', import.meta.url).pathname, 'start', '--port', '0', '--state-dir', dir], {
        env: { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh', PTY_WS_DEFAULT_SESSION_BACKEND: 'native' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
      const deadline = Date.now() + 15_000;
      while (!/dev token:\s+\S+/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const attach = /attach URL:\s+(\S+)/.exec(out)![1]!;
      const token = /dev token:\s+(\S+)/.exec(out)![1]!;
      const sessionId = /sessions\/([0-9a-f-]{36})\/attach/.exec(attach)![1]!;

      const a = await TestClient.connect(attach, { token });
      const b = await TestClient.connect(attach, { token, protocols: ['pty-ws.v1.binary'] });
      await a.join({ role: 'controller' });
      await b.join({ role: 'observer' });
      a.send('pty.session_input', { data: b64('for i in $(seq 1 50); do echo drain-$i; done\r') });
      await a.waitForOutput('drain-50');
      proc.kill('SIGTERM');
      for (const c of [a, b]) {
        expect((await c.waitForFrame((f) => f.op === 'binding_goodbye', 'goodbye')).payload).toEqual({ reason: 'server_shutdown' });
        expect((await c.waitForClose()).code).toBe(1000);
      }
      expect(await exited).toBe(0);

      const db = createClient({ url: `file:${dir}/pty-ws.db` });
      const rows = await readLogRows(db, sessionId);
      db.close();
      const logged = new Map(rows.map((r) => [r.sequence, r.frame]));
      const sent = a.frames().filter((f) => f.op === 'pty.session_frame' && ['Output', 'MembershipChanged', 'Resize', 'Closed'].includes(String(f.payload.kind)));
      expect(sent.filter((f) => f.payload.kind === 'Output').length).toBeGreaterThan(0);
      for (const f of sent) expect(logged.get(f.sequence) ?? null, `sequence ${f.sequence}`).toEqual(f);
      // Frames are numbered without gaps from 1.
      expect([...logged.keys()]).toEqual(Array.from({ length: logged.size }, (_, i) => i + 1));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
