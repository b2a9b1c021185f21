// Figure 1's baselines, each reading the same `cat` of the payload: node-pty in the bench's own
// process, the bare one-process WebSocket relay (bench/lib/relay-server.ts) and ttyd
// (bench/lib/ttyd.ts). The relay's and ttyd's CPU is their whole process's, per 100 MB.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import pty from 'node-pty';
import { BenchClient } from '../lib/client.ts';
import { sampleProcess } from '../lib/cpu.ts';
import type { Relay } from '../lib/relay.ts';
import type { Ttyd } from '../lib/ttyd.ts';

export interface OutputRun {
  mbps: number;
  bytes: number;
  verified: boolean;
}

/** A baseline run with its process's cost: CPU s per 100 MB, bytes written to disk per output byte. */
export interface ProcessRun extends OutputRun {
  cpuPer100MB: number;
  diskPerByte: number;
}

/** The process lingers after printing: a PTY that stays open loses none of its output at exit. */
export const catArgv = (file: string, delayS: number) => ['/bin/sh', '-c', `stty raw -echo; sleep ${delayS}; cat ${file}; exec sleep 3600`];

export async function fileDigest(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Resolves once every client has `size` bytes, or after `ms`. */
export function untilAll(clients: BenchClient[], size: number, ms: number): Promise<unknown> {
  const all = Promise.all(clients.map((c) => new Promise<void>((resolve) => (c.bytes >= size ? resolve() : c.on(() => c.bytes >= size && resolve())))));
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([all, new Promise((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
}

const rate = (c: BenchClient) => c.bytes / 1e6 / ((c.lastByteAt - c.firstByteAt) / 1000);

/** The floor: the same command read straight from node-pty in this process. */
export async function nodePtyBaseline(file: string, size: number, digest: string): Promise<OutputRun> {
  const h = createHash('sha256');
  let bytes = 0;
  let first = 0;
  let last = 0;
  const p = pty.spawn('/bin/sh', catArgv(file, 0.2).slice(1), { cols: 120, rows: 30, encoding: null as unknown as string });
  await new Promise<void>((resolve) => {
    p.onData((d) => {
      const buf = d as unknown as Buffer;
      const now = performance.now();
      if (bytes === 0) first = now;
      last = now;
      bytes += buf.length;
      h.update(buf);
      if (bytes >= size) resolve();
    });
    p.onExit(() => resolve());
  });
  p.kill();
  return { mbps: bytes / 1e6 / ((last - first) / 1000), bytes, verified: bytes === size && h.digest('hex') === digest };
}

/** `c` read to `size` while `pid`'s whole process is sampled. */
async function measured(c: BenchClient, pid: number | undefined, size: number, digest: string): Promise<ProcessRun> {
  const before = sampleProcess(pid);
  await untilAll([c], size, 120_000);
  const after = sampleProcess(pid);
  c.close();
  const cpu = before && after ? after.threads.reduce((a, t) => a + t.cpu, 0) - before.threads.reduce((a, t) => a + t.cpu, 0) : NaN;
  const disk = before && after ? after.disk.dirtied - after.disk.cancelled - (before.disk.dirtied - before.disk.cancelled) : NaN;
  return { mbps: rate(c), bytes: c.bytes, verified: c.bytes === size && c.hash.digest('hex') === digest, cpuPer100MB: (cpu * 100e6) / c.bytes, diskPerByte: disk / c.bytes };
}

/** The same through the bare one-process relay: the floor of any Node design. */
export async function relayRun(relay: Relay, file: string, size: number, digest: string): Promise<ProcessRun> {
  return measured(await BenchClient.connectRaw(relay.url(catArgv(file, 0.3))), relay.process.pid, size, digest);
}

/** The same through ttyd, started with catArgv (one process: what it spends is all of it). */
export async function ttydRun(ttyd: Ttyd, size: number, digest: string): Promise<ProcessRun> {
  return measured(await ttyd.connect(), ttyd.pid, size, digest);
}
