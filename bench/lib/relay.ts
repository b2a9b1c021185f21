// Starts bench/lib/relay-server.ts (node-pty behind a bare `ws` server) as a child process.
import { spawn, type ChildProcess } from 'node:child_process';

const SCRIPT = new URL('./relay-server.ts', import.meta.url).pathname;

export interface Relay {
  process: ChildProcess;
  /** A WebSocket URL whose connection runs `argv` in a fresh PTY. */
  url(argv: string[]): string;
  stop(): Promise<void>;
}

export async function startRelay(): Promise<Relay> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('the relay did not start in 20 s')), 20_000);
    child.once('exit', (code) => reject(new Error(`the relay exited (${code})`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  return {
    process: child,
    url: (argv) => `ws://127.0.0.1:${port}/?argv=${encodeURIComponent(JSON.stringify(argv))}`,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    },
  };
}
