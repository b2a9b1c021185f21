// A private tmux server (its own -L socket and an empty config) running one command in a pane, so a
// test can type into a real terminal, read its screen and see how the command exited.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class Tmux {
  private constructor(
    private readonly socket: string,
    private readonly dir: string,
  ) {}

  /** Starts `command` (run by /bin/sh) in a cols × rows pane; the pane stays after it exits so its screen can be read. */
  static async start(command: string, opts: { env?: Record<string, string>; cols?: number; rows?: number } = {}): Promise<Tmux> {
    const dir = mkdtempSync(join(tmpdir(), 'pty-ws-tmux-'));
    const socket = `pty-ws-test-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    const conf = join(dir, 'tmux.conf');
    writeFileSync(conf, 'set -g remain-on-exit on\nset -g status off\nset -g history-limit 5000\n');
    const env = Object.entries(opts.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    // tmux 3.3 does not always learn a pane's exit status (pane_dead_status stays empty): the shell writes it down.
    const wrapped = `${command}; echo $? > ${join(dir, 'status')}`;
    await run('tmux', ['-L', socket, '-f', conf, 'new-session', '-d', '-x', String(opts.cols ?? 100), '-y', String(opts.rows ?? 30), ...env, wrapped]);
    return new Tmux(socket, dir);
  }

  private tmux(...args: string[]): Promise<{ stdout: string }> {
    return run('tmux', ['-L', this.socket, ...args]);
  }

  /** Sets a server option (`set -g NAME VALUE`). */
  async setOption(name: string, value: string): Promise<void> {
    await this.tmux('set', '-g', name, value);
  }

  /** The paste buffers' contents, newest first (OSC 52 from a pane makes one with set-clipboard on). */
  async buffers(): Promise<string[]> {
    const names = (await this.tmux('list-buffers', '-F', '#{buffer_name}')).stdout.split('\n').filter(Boolean);
    return Promise.all(names.map(async (n) => (await this.tmux('show-buffer', '-b', n)).stdout));
  }

  async sendKeys(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', '0', ...keys);
  }

  /** Types text literally (no key-name lookup), then Enter when asked. */
  async type(text: string, enter = true): Promise<void> {
    await this.tmux('send-keys', '-t', '0', '-l', text);
    if (enter) await this.sendKeys('Enter');
  }

  async screen(): Promise<string> {
    return (await this.tmux('capture-pane', '-p', '-t', '0')).stdout;
  }

  /**
   * The pane's scrollback and screen. Read it after the command exited: tmux scrolls a dead pane
   * by a line to write "Pane is dead" under it, so a line printed at the top goes into the scrollback.
   */
  async transcript(): Promise<string> {
    return (await this.tmux('capture-pane', '-p', '-S', '-', '-t', '0')).stdout;
  }

  async resize(cols: number, rows: number): Promise<void> {
    await this.tmux('resize-window', '-t', '0', '-x', String(cols), '-y', String(rows));
  }

  /** The command's exit status once it has exited, else null. */
  exitStatus(): number | null {
    try {
      const text = readFileSync(join(this.dir, 'status'), 'utf8').trim();
      return text ? Number(text) : null;
    } catch {
      return null;
    }
  }

  async waitFor(pattern: RegExp | string, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.screen();
      if (typeof pattern === 'string' ? s.includes(pattern) : pattern.test(s)) return s;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(pattern)} in the pane:\n${s}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async waitForExit(timeoutMs = 15_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = this.exitStatus();
      if (status !== null) return status;
      if (Date.now() > deadline) throw new Error(`the command did not exit; pane:\n${await this.screen()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async kill(): Promise<void> {
    const socketPath = (await this.tmux('display-message', '-p', '#{socket_path}').catch(() => ({ stdout: '' }))).stdout.trim();
    await this.tmux('kill-server').catch(() => undefined);
    if (socketPath) rmSync(socketPath, { force: true });
    rmSync(this.dir, { recursive: true, force: true });
  }
}
