// Starts bench/lib/drain-client.ts: a reader of one session's output in a child process.
import { spawn } from 'node:child_process';

const SCRIPT = new URL('./drain-client.ts', import.meta.url).pathname;

export interface Drain {
  /** Output bytes the reader has had so far (its latest report). */
  bytes(): number;
  /** Ms since the reader last had output (its latest report); -1 before any. */
  idleMs(): number;
  stop(): Promise<void>;
}

/** Resolves once the reader has joined and its first output bytes arrived; rejects after 20 s. */
export async function startDrain(url: string, token: string): Promise<Drain> {
  // In a session of its own: on Linux that is its own CPU group (sched_autogroup), so its CPU comes
  // out of the machine's share and not out of the bench's group, where the router also runs —
  // as it would for a reader on another machine.
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { detached: true, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, DRAIN_URL: url, DRAIN_TOKEN: token } });
  let bytes = 0;
  let idle = -1;
  let buffered = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const m of lines.map((l) => /^bytes (\d+) (-?\d+)/.exec(l)).filter((x) => x !== null)) {
      bytes = Number(m[1]);
      idle = Number(m[2]);
    }
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const deadline = Date.now() + 20_000;
  while (bytes === 0) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error('the flood reader had no output in 20 s');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { bytes: () => bytes, idleMs: () => idle, stop };
}
