// The echo path's hop trace (src/adapter/node/hop-trace.ts, bench figure 2t): with
// PTY_HOP_TRACE_DIR set, the router's host connection and the real PTY host (which inherits the
// variable) write every hop of a keystroke's round trip, in order; unset, there is no tracer.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HOP_TRACE_ENV, hopTraceFromEnv } from '../../src/adapter/node/hop-trace.ts';
import { binaryEcho } from '../helpers/client.ts';
import { useHost, WAIT } from '../helpers/pty-host.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const ECHO = ['/bin/sh', '-c', 'stty raw -echo; echo ready; exec cat'];

/** Polls until `dir`'s trace has `chain` after `from`, each hop after the one before. */
async function expectChain(dir: string, from: number, chain: Array<[string, string]>): Promise<void> {
  // The processes write their lines every 100 ms.
  await vi.waitFor(() => {
    const after = events(dir).filter((e) => e.t >= from);
    let at = 0;
    for (const [hop, type] of chain) {
      const i = after.findIndex((e, k) => k >= at && e.hop === hop && (!type || e.type === type));
      expect(i, `${hop} (${type || 'any'}) after the hop before it`).toBeGreaterThanOrEqual(0);
      at = i;
    }
  }, WAIT);
}

function events(dir: string): Array<{ hop: string; t: number; type: string }> {
  return readdirSync(dir)
    .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n'))
    .filter(Boolean)
    .map((line) => {
      const [hop, t, type] = line.split(' ');
      return { hop: hop!, t: Number(t), type: type ?? '' };
    })
    .sort((a, b) => a.t - b.t);
}

describe('hop trace', () => {
  const traceDir = mkdtempSync(path.join(tmpdir(), 'pty-ws-hop-trace-test-'));
  // Before useHost's own beforeAll: the host it starts and the client it connects both read it.
  beforeAll(() => {
    process.env[HOP_TRACE_ENV] = traceDir;
  });
  const h = useHost('pty-ws-hop-trace-host-');
  afterAll(() => {
    delete process.env[HOP_TRACE_ENV];
    rmSync(traceDir, { recursive: true, force: true });
  });

  it('is off (no tracer) unless its variable names a directory', () => {
    expect(hopTraceFromEnv({}, 'router')).toBeUndefined();
    expect(hopTraceFromEnv({ [HOP_TRACE_ENV]: '' }, 'router')).toBeUndefined();
  });

  it('records a keystroke from the router to the PTY and its echo back, hop by hop', async () => {
    const sessionId = randomUUID();
    h.started.push(sessionId);
    await h.host.spawn({ sessionId, backend: 'native', argv: ECHO, cwd: h.dir, env: { PATH: '/usr/bin:/bin', HOME: h.dir }, cols: 80, rows: 24 });
    await h.rec.waitForOutput(sessionId, /ready/);
    const sentAt = performance.timeOrigin + performance.now();
    h.host.write(sessionId, new TextEncoder().encode('k'));
    await h.rec.waitForOutput(sessionId, /ready\r?\nk/);
    await expectChain(traceDir, sentAt, [
      ['router.to_host', 'write'],
      ['host.in', 'write'],
      ['host.pty_write', ''],
      ['host.pty_read', ''],
      ['host.out', 'data'],
      ['router.from_host', 'data'],
    ]);
    // Both processes wrote: the router's host connection and the host.
    expect(readdirSync(traceDir).map((f) => f.replace(/-\d+\.log$/, '')).sort()).toEqual(['host', 'router-host']);
  });
});

describe('hop trace through a real router', () => {
  const traceDir = mkdtempSync(path.join(tmpdir(), 'pty-ws-hop-trace-router-'));
  let server: TestServer;
  beforeAll(async () => {
    process.env[HOP_TRACE_ENV] = traceDir;
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
    delete process.env[HOP_TRACE_ENV];
    rmSync(traceDir, { recursive: true, force: true });
  });

  it("records a binary client's keystroke through the router: WS in, host, log, journal, WS out", async () => {
    const sentAt = performance.timeOrigin + performance.now();
    const { client } = await binaryEcho(server.attachUrl(server.defaultSession!.id), server.devToken);
    client.close();
    await expectChain(traceDir, sentAt, [
      ['router.ws_in', ''],
      ['router.to_host', 'write'],
      ['host.in', 'write'],
      ['host.pty_write', ''],
      ['host.pty_read', ''],
      ['host.out', 'data'],
      ['router.from_host', 'data'],
      ['router.hub_in', ''],
      ['router.log_in', ''],
      ['router.log_encoded', ''],
      ['router.log_out', ''],
      ['router.ws_out', ''],
    ]);
  });
});
