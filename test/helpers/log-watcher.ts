// A client that follows one session's log across reconnects (replay_from its last frame) and
// remembers every numbered frame it saw, so a test can tell a reused number from a replay.
import { TestClient, type Frame } from './client.ts';

const LOG_KINDS = new Set(['Output', 'Resize', 'MembershipChanged', 'Closed', 'Keyframe']);

export class LogWatcher {
  /** Content (ts + payload) by sequence, for every log frame but Keyframes. */
  readonly seen = new Map<number, string>();
  /** Sequences that carried a Keyframe (a join's unicast one shares its number with a log frame). */
  readonly keyframes = new Set<number>();
  /** A number seen twice with different content: what DECISIONS §18 forbids. */
  readonly conflicts: string[] = [];
  last = 0;
  closed: Frame | null = null;
  private client: TestClient | null = null;
  private absorbed = 0;

  /** `fromStart`: the first join replays the whole log (replay_from 0), not only a Keyframe. */
  constructor(
    readonly sessionId: string,
    readonly name: string,
    private readonly fromStart = false,
  ) {}

  get connected(): boolean {
    return this.client !== null && this.client.closed === null;
  }

  /** Joins as an observer, replaying from the last frame seen. Throws when the router refuses. */
  async connect(attachUrl: string, token: string): Promise<void> {
    this.client?.close();
    const client = await TestClient.connect(attachUrl, { token });
    this.client = client;
    this.absorbed = 0;
    client.send('pty.join_session', { role: 'observer' }, this.last > 0 || this.fromStart ? { replay_from: this.last } : {});
    await client.waitForFrame((f) => f.payload.kind === 'Keyframe' || f.op === 'Error' || f.payload.kind === 'Error', `${this.name}: the join's Keyframe`, 30_000);
    this.absorb();
  }

  /** Takes in what arrived since the last call. */
  absorb(): void {
    const frames = this.client?.frames() ?? [];
    for (const f of frames.slice(this.absorbed)) this.take(f);
    this.absorbed = frames.length;
  }

  /** Waits until this watcher has seen `sequence` (or the session closed). */
  async reach(sequence: number, timeoutMs = 20_000): Promise<void> {
    await this.client!.waitFor(
      () => {
        this.absorb();
        return this.last >= sequence || this.closed !== null;
      },
      `${this.name} to reach sequence ${sequence} (at ${this.last})`,
      timeoutMs,
    );
  }

  close(): void {
    this.absorb();
    this.client?.close();
    this.client = null;
  }

  /** Output text of every frame seen, in sequence order. */
  text(): string {
    const out: string[] = [];
    for (const [, content] of [...this.seen].sort((a, b) => a[0] - b[0])) {
      const payload = JSON.parse(content.slice(content.indexOf('|') + 1)) as { kind: string; data?: string };
      if (payload.kind === 'Output') out.push(Buffer.from(payload.data!, 'base64').toString('utf8'));
    }
    return out.join('');
  }

  /** Numbers between the first and last seen that no frame carried. */
  gaps(): number[] {
    const all = new Set([...this.seen.keys(), ...this.keyframes]);
    const sorted = [...all].sort((a, b) => a - b);
    const missing: number[] = [];
    for (let n = sorted[0] ?? 0; n <= (sorted.at(-1) ?? 0); n++) if (!all.has(n)) missing.push(n);
    return missing;
  }

  private take(f: Frame): void {
    const kind = f.payload.kind;
    if (!f.op.startsWith('pty.') || kind === undefined || !LOG_KINDS.has(kind)) return;
    if (kind === 'Keyframe') {
      this.keyframes.add(f.sequence);
    } else {
      const content = `${f.ts}|${JSON.stringify(f.payload)}`;
      const before = this.seen.get(f.sequence);
      if (before !== undefined && before !== content) this.conflicts.push(`${this.name} #${f.sequence}: ${before.slice(0, 160)} then ${content.slice(0, 160)}`);
      this.seen.set(f.sequence, content);
      if (kind === 'Closed') this.closed = f;
    }
    this.last = Math.max(this.last, f.sequence);
  }
}
