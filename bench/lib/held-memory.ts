// What a router process holds, read the way test/sessions/replay-stalled-joiners.test.ts reads it: its heap
// in use plus its buffers outside the heap (the `/metrics` gauges), right after a full collection.
// The resident size of an idle Node process moves by tens of MiB with when V8 last collected, so
// it says little about what a few clients hold. A heap snapshot starts with a full collection: the
// router is started with `--heapsnapshot-signal=SIGUSR2` (heldMemoryNodeArgs) and sent SIGUSR2.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchServer } from './server.ts';

/** Node options for startBenchServer: a heap snapshot on SIGUSR2, written into `dir`. */
export const heldMemoryNodeArgs = (dir: string): string[] => ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`];

/** Bytes the router holds after a full collection; each snapshot file is deleted once written. */
export async function heldBytes(server: BenchServer, dir: string): Promise<number> {
  server.router.kill('SIGUSR2');
  const deadline = Date.now() + 60_000;
  while (readdirSync(dir).length === 0) {
    if (Date.now() > deadline) throw new Error('the router wrote no heap snapshot in 60 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  // The snapshot holds the router's main thread: /metrics answers once it is written. A kept-alive
  // connection may have timed out meanwhile: asked again.
  let metrics = '';
  for (let attempt = 0; !metrics; attempt++) {
    metrics = await fetch(`${server.origin}/metrics`, { headers: { authorization: `Bearer ${server.token}` } }).then(
      (r) => r.text(),
      (e: Error) => {
        if (attempt >= 20) throw new Error(`the router's /metrics after a heap snapshot: ${e.message}`);
        return new Promise<string>((r) => setTimeout(() => r(''), 500));
      },
    );
  }
  for (const f of readdirSync(dir)) rmSync(join(dir, f), { force: true });
  const gauge = (name: string) => Number(new RegExp(`^pty_ws_${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN);
  return gauge('nodejs_heap_size_used_bytes') + gauge('nodejs_external_memory_bytes');
}
