// The echo path's hop trace (src/adapter/node/hop-trace.ts, bench figure 2t): with
// PTY_HOP_TRACE_DIR set, the router's host connection and the real PTY host (which inherits the
// variable) write every hop of a keystroke's round trip, in order; unset, there is no tracer.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HOP_TRACE_ENV, hopTraceFromEnv } from '../src/adapter/node/hop-trace.ts';
import { useHost, WAIT } from './helpers/pty-host.ts';

const ECHO = ['/bin/sh', '-c', 'stty raw -echo; echo ready; exec cat'];

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
    const path_ = [
      ['router.to_host', 'write'],
      ['host.in', 'write'],
      ['host.pty_write', ''],
      ['host.pty_read', ''],
      ['host.out', 'data'],
      ['router.from_host', 'data'],
    ];
    // The processes write their lines every 100 ms: poll until the whole chain is there, in order.
    await vi.waitFor(() => {
      const after = events(traceDir).filter((e) => e.t >= sentAt);
      let at = 0;
      for (const [hop, type] of path_) {
        const i = after.findIndex((e, k) => k >= at && e.hop === hop && (!type || e.type === type));
        expect(i, `${hop} (${type}) after the hop before it`).toBeGreaterThanOrEqual(0);
        at = i;
      }
    }, WAIT);
    // Both processes wrote: the router's host connection and the host.
    expect(readdirSync(traceDir).map((f) => f.replace(/-\d+\.log$/, '')).sort()).toEqual(['host', 'router-host']);
  });
});
