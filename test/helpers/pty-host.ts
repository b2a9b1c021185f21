// Talking to a real PTY host in tests: a logger that keeps quiet, and a recorder of its events.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import type { PtyHostClient } from '../../src/adapter/node/pty-host-client.ts';
import { ensurePtyHost, type NodePtyHostHandle as PtyHostHandle } from '../../src/adapter/node/pty-host-process.ts';
import type { Logger } from '../../src/ports/logger.ts';
import type { PtyExit, PtyHost } from '../../src/ports/pty-host.ts';
import { expectNoneLeft, killMultiplexers } from './leftovers.ts';

export const WAIT = { timeout: 8000, interval: 20 };

/** Collects log calls instead of printing them; dump `lines` when debugging a failure. */
export function quietLogger(lines: string[] = []): Logger {
  return {
    log: (level, msg, fields) => void lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`),
    child: () => quietLogger(lines),
  };
}

/** Everything a host reports, per session. */
export class Recorder {
  readonly output = new Map<string, Buffer[]>();
  readonly exits = new Map<string, PtyExit>();
  lost: string | undefined;

  constructor(host: PtyHost) {
    host.subscribe({
      onData: (id, data) => {
        const chunks = this.output.get(id) ?? [];
        chunks.push(Buffer.from(data));
        this.output.set(id, chunks);
      },
      onExit: (id, exit) => this.exits.set(id, exit),
      onHostLost: (reason) => (this.lost = reason),
    });
    host.startEvents();
  }

  text(id: string): string {
    return Buffer.concat(this.output.get(id) ?? []).toString('latin1');
  }

  async exitOf(id: string): Promise<PtyExit> {
    return vi.waitFor(() => {
      const exit = this.exits.get(id);
      if (!exit) throw new Error(`session ${id} has not exited; output so far: ${JSON.stringify(this.text(id))}`);
      return exit;
    }, WAIT);
  }

  async waitForOutput(id: string, pattern: RegExp): Promise<void> {
    await vi.waitFor(() => expect(this.text(id)).toMatch(pattern), WAIT);
  }
}

export interface HostFixture {
  dir: string;
  socketPath: string;
  handle: PtyHostHandle;
  host: PtyHostClient;
  rec: Recorder;
  /** Sessions to SIGKILL after the current test. */
  started: string[];
}

/**
 * A real PTY host in a temp dir for a describe block: started before its tests, the sessions a
 * test started killed after it, and at the end the host, its multiplexers and the dir gone,
 * with nothing of them left running.
 */
export function useHost(prefix: string): HostFixture {
  const f = { started: [] as string[] } as HostFixture;
  beforeAll(async () => {
    f.dir = await mkdtemp(path.join(tmpdir(), prefix));
    f.socketPath = path.join(f.dir, 'host.sock');
    f.handle = await ensurePtyHost({ socketPath: f.socketPath, logger: quietLogger() });
    f.host = f.handle.host;
    f.rec = new Recorder(f.host);
  });
  afterEach(() => {
    for (const id of f.started.splice(0)) f.host.kill(id, 'SIGKILL');
  });
  afterAll(async () => {
    await f.handle?.stop();
    await killMultiplexers(f.socketPath);
    await expectNoneLeft(f.dir);
    await rm(f.dir, { recursive: true, force: true });
  });
  return f;
}
