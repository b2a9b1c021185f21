// native/direct: node-pty runs the program itself; the session lives and dies with this host.

import type { PtyExit, SpawnSpec } from '../../src/ports/pty-host.ts';
import { PtyHostError } from '../wire/protocol.ts';
import { endSession } from './process-tree.ts';
import type { Attached, Backend, Recovered } from './backend.ts';
import type { SpawnTerminal } from './terminal-spawn.ts';

export class NativeBackend implements Backend {
  readonly name = 'native';
  readonly survivesHost = false;
  readonly #spawn: SpawnTerminal;

  constructor(spawn: SpawnTerminal) {
    this.#spawn = spawn;
  }

  async start(spec: SpawnSpec, program: string): Promise<Attached> {
    const pty = this.#spawn(program, spec.argv.slice(1), {
      // node-pty overwrites TERM with `name`, so a TERM the router chose must become the name.
      name: spec.env.TERM ?? 'xterm-256color',
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.cwd,
      env: spec.env,
      encoding: null,
    });
    return { pty, pid: pty.pid, cols: spec.cols, rows: spec.rows };
  }

  async ended(_sessionId: string, ptyExit: PtyExit): Promise<PtyExit> {
    return ptyExit;
  }

  reattach(sessionId: string): Promise<Attached> {
    return Promise.reject(new PtyHostError('spawn_failed', `native session ${sessionId} cannot be attached again`));
  }

  async kill(_sessionId: string, pid: number, signal: NodeJS.Signals): Promise<void> {
    endSession(pid, signal);
  }

  async recover(): Promise<Recovered[]> {
    return [];
  }
}
