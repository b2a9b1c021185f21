// A real `ws` client that records every frame and waits for the ones a test expects.
import WebSocket from 'ws';
import { uuidv7 } from '../../src/core/ids.ts';

export interface Frame {
  op: string;
  id: string;
  ts: string;
  sequence: number;
  payload: Record<string, unknown> & { kind?: string };
}

export interface ConnectOptions {
  token?: string | null;
  protocols?: string[];
  headers?: Record<string, string>;
  /** Trusted CA for a wss:// server with a self-signed certificate. */
  ca?: string | Buffer;
}

function open(url: string, opts: ConnectOptions): WebSocket {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  return new WebSocket(url, opts.protocols ?? ['pty-ws.v1'], opts.ca ? { headers, ca: opts.ca } : { headers });
}

export type Received = { type: 'json'; frame: Frame } | { type: 'binary'; data: Buffer };

export class TestClient {
  readonly received: Received[] = [];
  closed: { code: number; reason: string } | null = null;
  private waiters: Array<() => void> = [];
  /** The decoded Output, frame by frame as it arrives (waiting on it must not be quadratic). */
  private readonly outputChunks: string[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const r: Received = isBinary ? { type: 'binary', data } : { type: 'json', frame: JSON.parse(data.toString('utf8')) as Frame };
      this.received.push(r);
      if (r.type === 'binary') this.outputChunks.push(r.data.subarray(13).toString('utf8'));
      else if (r.frame.payload.kind === 'Output') this.outputChunks.push(Buffer.from(String(r.frame.payload.data), 'base64').toString('utf8'));
      this.wake();
    });
    ws.on('close', (code: number, reason: Buffer) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  static async connect(url: string, opts: ConnectOptions = {}): Promise<TestClient> {
    const ws = open(url, opts);
    const client = new TestClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.on('error', reject);
    });
    return client;
  }

  /** The HTTP status a refused upgrade got; rejects if the upgrade is accepted. */
  static async refusedStatus(url: string, opts: ConnectOptions = {}): Promise<number> {
    const status = await TestClient.upgradeStatus(url, opts);
    if (status === 101) throw new Error('upgrade was accepted');
    return status;
  }

  /** 101 when the upgrade is accepted (the socket is closed again at once), else the HTTP status. */
  static upgradeStatus(url: string, opts: ConnectOptions = {}): Promise<number> {
    const ws = open(url, opts);
    return new Promise((resolve, reject) => {
      ws.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.once('open', () => {
        ws.close();
        resolve(101);
      });
      ws.on('error', reject);
    });
  }

  send(op: string, payload: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): string {
    const id = uuidv7();
    this.ws.send(JSON.stringify({ op, id, ts: new Date().toISOString(), payload, ...extra }));
    return id;
  }

  sendRaw(data: string | Buffer): void {
    this.ws.send(data);
  }

  frames(): Frame[] {
    return this.received.flatMap((r) => (r.type === 'json' ? [r.frame] : []));
  }

  /** Everything the PTY printed so far: JSON Output frames and PW1O binary frames, in order. */
  output(): string {
    return this.outputChunks.join('');
  }

  /** The text of the latest Keyframe's snapshot (escape sequences and all). */
  screen(): string {
    const k = this.frames().filter((f) => f.payload.kind === 'Keyframe').at(-1);
    return k ? Buffer.from(String(k.payload.snapshot), 'base64').toString('utf8') : '';
  }

  async waitFor<T>(check: () => T | undefined | false | null, what: string, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.frames().map((f) => [f.op, f.payload.kind ?? '', f.sequence])).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, Math.min(200, deadline - Date.now())));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  waitForFrame(pred: (f: Frame) => boolean, what: string, timeoutMs?: number): Promise<Frame> {
    return this.waitFor(() => this.frames().find(pred), what, timeoutMs);
  }

  waitForOutput(text: string, timeoutMs?: number): Promise<string> {
    // Each wake searches only what arrived since the last one, after the tail of what came before.
    let next = 0;
    let carry = '';
    return this.waitFor(
      () => {
        const fresh = carry + this.outputChunks.slice(next).join('');
        next = this.outputChunks.length;
        carry = fresh.slice(-(text.length - 1) || fresh.length);
        return fresh.includes(text) ? this.output() : undefined;
      },
      `output containing ${JSON.stringify(text)}`,
      timeoutMs,
    );
  }

  waitForClose(timeoutMs?: number): Promise<{ code: number; reason: string }> {
    return this.waitFor(() => this.closed, 'close', timeoutMs);
  }

  async join(payload: Record<string, unknown> = { role: 'controller' }, extra: Record<string, unknown> = {}): Promise<Frame[]> {
    const id = this.send('pty.join_session', payload, extra);
    const end = await this.waitForFrame((f) => f.id === id && (f.payload.kind === 'Keyframe' || f.op === 'Error'), 'join to finish');
    const frames = this.frames();
    return frames.slice(0, frames.indexOf(end) + 1);
  }

  close(): void {
    this.ws.close();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

export const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/**
 * Attaches in binary mode (offering both tokens), joins as controller, types through PW1I and waits
 * for the echo: the client, and the PW1O frames it got. The same scenario on every runtime.
 */
export async function binaryEcho(url: string, token: string | null | undefined): Promise<{ client: TestClient; hello: Frame; pw1o: Buffer[] }> {
  const client = await TestClient.connect(url, { token, protocols: ['pty-ws.v1', 'pty-ws.v1.binary'] });
  const hello = await client.waitForFrame((f) => f.op === 'binding_hello', 'hello');
  await client.join({ role: 'controller' });
  client.sendRaw(Buffer.concat([Buffer.from('PW1I'), Buffer.from('echo bin-$((1+1))\r')]));
  await client.waitForOutput('bin-2');
  return { client, hello, pw1o: client.received.flatMap((r) => (r.type === 'binary' ? [r.data] : [])) };
}
