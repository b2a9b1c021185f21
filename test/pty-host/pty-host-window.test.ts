// The credit loop over a real host and real PTYs (docs/architecture.md, "The credit loop";
// docs/protocol.md §9.3): a router that gives credit back gets at most the loop's high mark of a
// session's output it has not taken (so the link never holds a flood ahead of another session's
// echo), the other sessions flow on meanwhile, a durability ack gives no credit, credit lets the
// session read on, a connection's end takes its loop with it, and a router that asked for no
// credit is not bounded.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PtyHostClient } from '../../src/adapter/node/pty-host-client.ts';
import { ensurePtyHost, type NodePtyHostHandle } from '../../src/adapter/node/pty-host-process.ts';
import { CREDIT_HIGH_BYTES, CREDIT_LOW_BYTES, OUTPUT_FRAME_MAX_BYTES } from '../../src/core/flow-budget.ts';
import type { SpawnSpec } from '../../src/ports/pty-host.ts';
import { expectNoneLeft } from '../helpers/leftovers.ts';
import { quietLogger, WAIT } from '../helpers/pty-host.ts';

/** What may arrive past the high mark: the frame that crossed it. */
const SLACK = OUTPUT_FRAME_MAX_BYTES;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A connection to the host with its own record of each session's output and last event number. */
async function receiver(socketPath: string) {
  const client = await PtyHostClient.connect(socketPath);
  const bytes = new Map<string, number>();
  const last = new Map<string, number>();
  client.subscribe({
    onData: (id, data, n) => {
      bytes.set(id, (bytes.get(id) ?? 0) + data.byteLength);
      if (n !== undefined) last.set(id, n);
    },
    onExit: () => undefined,
  });
  return { client, bytes: (id: string) => bytes.get(id) ?? 0, last: (id: string) => last.get(id) ?? 0 };
}

/** Resolves once the session's output has not grown for a while: it is held (or ended). */
async function stalls(r: { bytes(id: string): number }, id: string): Promise<number> {
  let before = -1;
  await vi.waitFor(async () => {
    const now = r.bytes(id);
    const was = before;
    before = now;
    await sleep(300);
    expect(now).toBe(was);
    expect(r.bytes(id)).toBe(now);
  }, { timeout: 15_000, interval: 50 });
  return r.bytes(id);
}

async function grows(r: { bytes(id: string): number }, id: string, by = 1): Promise<void> {
  const from = r.bytes(id);
  await vi.waitFor(() => expect(r.bytes(id)).toBeGreaterThanOrEqual(from + by), WAIT);
}

describe('the credit loop holds each session at its high mark until the router takes its output', () => {
  let dir: string;
  let socketPath: string;
  let handle: NodePtyHostHandle;
  const started: string[] = [];

  const spec = (argv: string[]): SpawnSpec => {
    const sessionId = randomUUID();
    started.push(sessionId);
    return { sessionId, backend: 'native', argv, cwd: dir, env: { PATH: '/usr/bin:/bin', HOME: dir }, cols: 80, rows: 24 };
  };
  const flood = () => spec(['/bin/sh', '-c', 'stty raw -echo; exec yes 0123456789abcdefghijklmnopqrstuvwxyz']);
  const ticker = () => spec(['/bin/sh', '-c', 'i=0; while :; do i=$((i+1)); echo t-$i; sleep 0.02; done']);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pty-ws-host-credit-'));
    socketPath = path.join(dir, 'host.sock');
    handle = await ensurePtyHost({ socketPath, logger: quietLogger() });
  });

  afterAll(async () => {
    for (const id of started) handle?.host.kill(id, 'SIGKILL');
    await handle?.stop();
    await expectNoneLeft(dir);
    await rm(dir, { recursive: true, force: true });
  });

  it('holds a flooding session until credit comes back, while another flows on; an ack is no credit', async () => {
    const r = await receiver(socketPath);
    try {
      expect(r.client.supports('session_credit')).toBe(true);
      r.client.startEvents(undefined, true);
      const a = flood();
      const b = ticker();
      await r.client.spawn(a);
      await r.client.spawn(b);
      const held = await stalls(r, a.sessionId);
      expect(held).toBeGreaterThan(CREDIT_LOW_BYTES);
      expect(held).toBeLessThanOrEqual(CREDIT_HIGH_BYTES + SLACK);
      // The loop is the flooding session's alone.
      await grows(r, b.sessionId, 50);
      r.client.credit(b.sessionId, r.bytes(b.sessionId));
      // Durability is not credit: the host may forget what is journaled, the PTY stays held.
      r.client.ack(a.sessionId, r.last(a.sessionId));
      await sleep(500);
      expect(r.bytes(a.sessionId)).toBe(held);

      r.client.credit(a.sessionId, held);
      await grows(r, a.sessionId, CREDIT_LOW_BYTES);
      const again = await stalls(r, a.sessionId);
      expect(again - held).toBeLessThanOrEqual(CREDIT_HIGH_BYTES + SLACK);
    } finally {
      for (const id of started.splice(0)) r.client.kill(id, 'SIGKILL');
      await r.client.close();
    }
  });

  it("ends a connection's loop with the connection; the next one's counts only what it is sent", async () => {
    const first = await receiver(socketPath);
    const a = flood();
    let epoch: string;
    try {
      first.client.startEvents(undefined, true);
      await first.client.spawn(a);
      await stalls(first, a.sessionId);
      epoch = first.client.epoch!;
      first.client.ack(a.sessionId, first.last(a.sessionId));
    } finally {
      await first.client.close();
    }
    const second = await receiver(socketPath);
    try {
      // What the first router journaled is not sent again, and holds none of the second's credit.
      second.client.startEvents({ epoch, after: { [a.sessionId]: first.last(a.sessionId) } }, true);
      await grows(second, a.sessionId, CREDIT_LOW_BYTES);
    } finally {
      for (const id of started.splice(0)) second.client.kill(id, 'SIGKILL');
      await second.client.close();
    }
  });

  it('does not bound a router that asked for no credit', async () => {
    const r = await receiver(socketPath);
    try {
      r.client.startEvents();
      const a = flood();
      await r.client.spawn(a);
      await grows(r, a.sessionId, 8 * CREDIT_HIGH_BYTES);
    } finally {
      for (const id of started.splice(0)) r.client.kill(id, 'SIGKILL');
      await r.client.close();
    }
  });
});
