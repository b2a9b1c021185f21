// Talking to a real PTY host in tests: a logger that keeps quiet, and a recorder of its events.
import { expect, vi } from 'vitest';
import type { Logger, PtyExit, PtyHost } from '../../src/ports.ts';

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
