// A lean WebSocket client for measurements: counts and hashes bytes without keeping them.
import { createHash, type Hash } from 'node:crypto';
import WebSocket from 'ws';

/** ttyd's message type byte of output (server → client) and of input (client → server): '0'. */
const TTYD_DATA = 0x30;

/** Wait before retrying an upgrade the server refused with 429. */
const RETRY_MS = 500;

export interface Frame {
  op: string;
  id: string;
  sequence: number;
  payload: Record<string, unknown> & { kind?: string };
}

export class BenchClient {
  bytes = 0;
  firstByteAt = 0;
  lastByteAt = 0;
  hash: Hash = createHash('sha256');
  /** Off for fan-out observers: one hashing client is the check, 32 more only load the machine the server shares. */
  hashing = true;
  /** Time connect() spent waiting out the server's upgrade rate limit (429) before this socket opened. */
  rateLimitedMs = 0;
  private listeners: Array<(f: Frame | null, data: Buffer | null) => void> = [];

  /**
   * `header`: bytes before the output in a binary message (PW1O's 13; 0 for a raw relay; 1 for
   * ttyd, whose binary messages are output only when that byte is '0': '1' is its title, '2' its
   * preferences).
   */
  private constructor(
    readonly ws: WebSocket,
    private readonly header = 13,
    private readonly ttyd = false,
  ) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      let out: Buffer | null = null;
      let frame: Frame | null = null;
      if (this.ttyd) out = data[0] === TTYD_DATA ? data.subarray(1) : null;
      else if (isBinary) out = this.header ? data.subarray(this.header) : data;
      else {
        frame = JSON.parse(data.toString()) as Frame;
        if (frame.payload.kind === 'Output') out = Buffer.from(String(frame.payload.data), 'base64');
      }
      if (out) {
        const now = performance.now();
        if (this.bytes === 0) this.firstByteAt = now;
        this.lastByteAt = now;
        this.bytes += out.length;
        if (this.hashing) this.hash.update(out);
      }
      for (const l of this.listeners) l(frame, out);
    });
  }

  /** Connects; a 429 (the server's upgrade rate limit per principal) is waited out and retried. */
  static async connect(url: string, token: string, binary: boolean): Promise<BenchClient> {
    for (let attempt = 0; ; attempt++) {
      const ws = new WebSocket(url, [binary ? 'pty-ws.v1.binary' : 'pty-ws.v1'], { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
      const status = await new Promise<number>((resolve, reject) => {
        ws.once('open', () => resolve(101));
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('error', reject);
      });
      if (status === 101) {
        const client = new BenchClient(ws);
        client.rateLimitedMs = attempt * RETRY_MS;
        return client;
      }
      ws.terminate();
      if (status !== 429 || attempt >= 60) throw new Error(`attach refused: HTTP ${status}`);
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }

  /** A raw relay (bench/lib/relay.ts): every binary message is output, input goes as it is. */
  static async connectRaw(url: string): Promise<BenchClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new BenchClient(ws, 0);
  }

  /**
   * ttyd (bench/lib/ttyd.ts): subprotocol `tty`, and the first message, the terminal's size as
   * JSON, is what spawns its command.
   */
  static async connectTtyd(url: string, columns: number, rows: number): Promise<BenchClient> {
    const ws = new WebSocket(url, ['tty'], { perMessageDeflate: false });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const client = new BenchClient(ws, 1, true);
    ws.send(JSON.stringify({ AuthToken: '', columns, rows }));
    return client;
  }

  on(listener: (f: Frame | null, data: Buffer | null) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  send(op: string, payload: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): string {
    const id = `${op}-${Math.random().toString(36).slice(2)}`;
    this.ws.send(JSON.stringify({ op, id, ts: new Date().toISOString(), payload, ...extra }));
    return id;
  }

  sendInput(data: Buffer, binary: boolean): void {
    if (this.ttyd) this.ws.send(Buffer.concat([Buffer.from([TTYD_DATA]), data]));
    else if (this.header === 0) this.ws.send(data);
    else if (binary) this.ws.send(Buffer.concat([Buffer.from('PW1I'), data]));
    else this.send('pty.session_input', { data: data.toString('base64') });
  }

  /** Resolves with the first frame matching; rejects after timeoutMs. */
  waitFor(pred: (f: Frame) => boolean, timeoutMs = 30_000): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        off();
        reject(new Error('timed out'));
      }, timeoutMs);
      const off = this.on((f) => {
        if (f && pred(f)) {
          clearTimeout(t);
          off();
          resolve(f);
        }
      });
    });
  }

  async join(role: 'controller' | 'observer', extra: Record<string, unknown> = {}): Promise<void> {
    const id = this.send('pty.join_session', { role }, extra);
    await this.waitFor((f) => f.id === id && (f.payload.kind === 'Keyframe' || f.op === 'Error'));
  }

  resetCounters(): void {
    this.bytes = 0;
    this.firstByteAt = 0;
    this.lastByteAt = 0;
    this.hash = createHash('sha256');
  }

  close(): void {
    this.ws.terminate();
  }
}
