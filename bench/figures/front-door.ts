// Figure 8 (BENCH_ONLY=frontdoor): attach latency through a fleet's nginx front door (`pty-ws
// nginx-config`, docs/deployment.md) against the same router reached directly. One sample is a new
// WebSocket (upgrade with the bearer) and a controller join until its Keyframe, then a close; the
// two paths alternate sample by sample, so machine load falls on both alike. Attaches are paced
// under the router's upgrade limit per principal (UPGRADE_ATTEMPTS_PER_SECOND): a 429 never counts.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nginxFleetConfig } from '../../src/adapter/node/cli/nginx-config.ts';
import { UPGRADE_ATTEMPTS_PER_SECOND } from '../../src/core/config.ts';
import { BenchClient } from '../lib/client.ts';
import type { BenchServer } from '../lib/server.ts';
import { ECHO_ARGV, summarize, within, type Latency } from './latency.ts';

const NGINX = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

const PACE_MS = Math.ceil(1000 / UPGRADE_ATTEMPTS_PER_SECOND) + 10;

export type FrontDoorAttach = { direct: Latency; frontDoor: Latency } | { skipped: string };

export async function frontDoorAttach(server: BenchServer, samples: number, warmup: number): Promise<FrontDoorAttach> {
  const prefix = mkdtempSync(join(tmpdir(), 'pty-ws-bench-nginx-'));
  let nginx: ChildProcess | undefined;
  try {
    const listen = `127.0.0.1:${await freePort()}`;
    const config = nginxFleetConfig({ listen, instances: [{ id: 'local', upstream: new URL(server.origin).host }], standalone: { prefix, ...(process.getuid?.() === 0 ? { user: 'root' } : {}) } });
    writeFileSync(join(prefix, 'nginx.conf'), config);
    nginx = spawn(NGINX, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-e', join(prefix, 'error.log'), '-g', 'daemon off;'], { stdio: 'ignore' });
    const started = await nginxAnswers(nginx, `http://${listen}/healthz`);
    if (started !== true) return { skipped: started };

    const id = await server.createSession({ argv: ECHO_ARGV });
    const direct = server.attachUrl(id);
    const door = direct.replace(new URL(direct).host, listen);
    const times = { direct: [] as number[], frontDoor: [] as number[] };
    for (let i = 0; i < samples + warmup; i++) {
      for (const [key, url] of [['direct', direct], ['frontDoor', door]] as const) {
        await new Promise((r) => setTimeout(r, PACE_MS));
        const t0 = performance.now();
        const c = await within(BenchClient.connect(url, server.token, true), 10_000, `attach ${key} ${i}`);
        await within(c.join('controller'), 10_000, `join ${key} ${i}`);
        const ms = performance.now() - t0;
        c.close();
        if (i >= warmup && c.rateLimitedMs === 0) times[key].push(ms);
      }
    }
    return { direct: summarize(times.direct), frontDoor: summarize(times.frontDoor) };
  } finally {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx!.once('exit', r));
      nginx.kill('SIGTERM');
      await exited;
    }
    rmSync(prefix, { recursive: true, force: true });
  }
}

/** true once nginx answers through to the router; else why not (not installed, exited, silent). */
async function nginxAnswers(nginx: ChildProcess, url: string): Promise<true | string> {
  const failed = new Promise<string>((r) => {
    nginx.once('error', (e) => r(`nginx not started: ${e.message}`));
    nginx.once('exit', (code) => r(`nginx exited (${code})`));
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await Promise.race([fetch(url).then((r) => r.ok, () => false), failed]);
    if (ok === true) return true;
    if (typeof ok === 'string') return ok;
    if (Date.now() > deadline) return 'nginx did not answer in 15 s';
    await new Promise((r) => setTimeout(r, 50));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
