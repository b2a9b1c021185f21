// The PTY host's runtime calls on Node (the logic: src/host-link/launcher.ts): connect over
// node:net, start the host's entry (package-files.ts: `src/adapter/node/pty-host-main.ts` with tsx, or the bundle).

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ensurePtyHost as ensure, type EnsurePtyHostOptions, type PtyHostHandle, type PtyHostRuntime } from '../../host-link/launcher.ts';
import { PtyHostClient } from './pty-host-client.ts';
import { ptyHostEntry } from './package-files.ts';

export type { EnsurePtyHostOptions };
/** A handle of a host reached from Node: `child` is the host process when this router started it. */
export type NodePtyHostHandle = PtyHostHandle<ChildProcess>;

export const nodePtyHostRuntime: PtyHostRuntime<ChildProcess> = {
  connect: (socketPath, options) => PtyHostClient.connect(socketPath, options),
  environment: () => process.env,
  spawnHost({ args, env, stdout, stderr }) {
    const entry = ptyHostEntry();
    const child = spawn(process.execPath, [...entry.nodeArgs, ...args], {
      cwd: entry.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    createInterface({ input: child.stdout! }).on('line', stdout);
    createInterface({ input: child.stderr! }).on('line', stderr);
    // 'close' rather than 'exit' so the stderr explaining the death has been read.
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      child.once('close', (code, signal) => resolve({ code, signal }));
      child.once('error', () => resolve({ code: null, signal: null }));
    });
    return {
      child,
      pid: child.pid,
      exited,
      get done() {
        return child.exitCode !== null || child.signalCode !== null || child.pid === undefined;
      },
      kill: (signal) => void child.kill(signal),
      release() {
        child.stdout?.destroy();
        child.stderr?.destroy();
        child.unref();
      },
    };
  },
};

/** Connects to the host at socketPath, starting one first when nothing listens there. */
export function ensurePtyHost(options: EnsurePtyHostOptions): Promise<NodePtyHostHandle> {
  return ensure(nodePtyHostRuntime, { ...options, socketPath: path.resolve(options.socketPath) });
}
