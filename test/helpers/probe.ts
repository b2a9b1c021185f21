// Watches a PtyClient the way a terminal UI uses it: output and repainting Keyframes go into a headless
// xterm, so a test can compare the screen a user would see, and wait for what it expects.
import xterm from '@xterm/headless';
import type { Incoming } from '../../src/client/frames.ts';
import type { PtyClient } from '../../src/client/pty-client.ts';
import type { ClientError, ConnectionState, EndInfo, KeyframeEvent } from '../../src/client/types.ts';

export class ClientProbe {
  readonly chunks: Uint8Array[] = [];
  readonly keyframes: KeyframeEvent[] = [];
  readonly errors: ClientError[] = [];
  readonly states: ConnectionState[] = [];
  readonly frames: Incoming[] = [];
  end: EndInfo | null = null;
  readonly term: InstanceType<typeof xterm.Terminal>;

  constructor(readonly client: PtyClient, size = { cols: 100, rows: 30 }) {
    this.term = new xterm.Terminal({ ...size, scrollback: 1000, allowProposedApi: true });
    client.on('output', (data) => {
      this.chunks.push(data);
      this.term.write(data);
    });
    client.on('keyframe', (k) => {
      this.keyframes.push(k);
      if (!k.repaint) return;
      this.term.reset();
      this.term.resize(k.cols, k.rows);
      this.term.write(k.snapshot);
    });
    client.on('resize', (g) => this.term.resize(g.cols, g.rows));
    client.on('error', (e) => this.errors.push(e));
    client.on('state', (s) => this.states.push(s));
    client.on('frame', (f) => this.frames.push(f));
    client.on('end', (e) => (this.end = e));
  }

  /** Every output byte received, as text. */
  output(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  /** The visible screen plus scrollback, one line per row, trailing blanks trimmed. */
  async screen(): Promise<string> {
    await new Promise<void>((resolve) => this.term.write('', resolve));
    const buf = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < buf.length; i++) lines.push(buf.getLine(i)?.translateToString(true) ?? '');
    return lines.join('\n').replace(/\s+$/, '');
  }

  async waitFor<T>(check: () => T | undefined | null | false, what: string, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; state ${this.client.state}, output ${JSON.stringify(this.output().slice(-500))}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  waitForOutput(text: string, timeoutMs?: number): Promise<string> {
    return this.waitFor(() => (this.output().includes(text) ? this.output() : null), `output ${JSON.stringify(text)}`, timeoutMs);
  }

  waitForState(state: ConnectionState, after = 0, timeoutMs?: number): Promise<number> {
    return this.waitFor(() => {
      const i = this.states.indexOf(state, after);
      return i >= 0 ? i + 1 : null;
    }, `state ${state}`, timeoutMs);
  }
}

export const count = (haystack: string, needle: string): number => haystack.split(needle).length - 1;
