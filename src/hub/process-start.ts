// Starting a session's process (docs/protocol.md §5.4): the backend and size the join asks for, the
// spawn spec, and the screen made before the process exists so its first bytes are folded in.
import type { HubDeps } from './deps.ts';
import { askedHost } from './join-spec.ts';
import type { Ending, Lifecycle, Starter } from './lifecycle.ts';
import { buildSpawnSpec, selectBackend, spawnError } from './session-host.ts';
import type { SessionScreen } from '../screen/session-screen.ts';
import { joinSize } from './size-policy.ts';

export interface StarterContext {
  readonly deps: HubDeps;
  readonly lifecycle: Lifecycle;
  readonly screen: SessionScreen;
  /** Ends the session: its Closed frame, logged, then goodbyes to any members. */
  end(ending: Ending): void;
}

/**
 * The PTY host's verdicts that no retry changes: the program or its working directory is not there.
 * The session then ends with Closed(error) (docs/protocol.md §5.4); any other failure (the host
 * unreachable or slow, a backend it lacks) refuses only the join, and a later one may start it.
 */
const CANNOT_START = new Set(['not_found', 'bad_cwd']);

export function processStarter(s: StarterContext): Starter {
  return async (req, firstController) => {
    const { config, pty, sessionHost } = s.deps;
    const record = s.lifecycle.record;
    const asked = askedHost(req);
    const { backend, sessionClass } = selectBackend(sessionHost, asked.backend ?? record.backend, asked.sessionClass ?? record.sessionClass);
    // Only the first controller's size counts.
    const size = firstController ? joinSize(req) : undefined;
    const cols = size?.cols ?? record.cols;
    const rows = size?.rows ?? record.rows;
    // A remote host that says what it runs by default (its login shell, all its policy may allow) runs that.
    const defaultShell = (record.host !== null && s.deps.hostShell?.(record.host)) || config.defaultShell;
    const spec = buildSpawnSpec({ ...record, backend }, req, cols, rows, { defaultShell, defaultCwd: config.defaultCwd, baseEnv: config.sessionBaseEnv });
    // A session stays on the host it was placed on at its creation (docs/remote-hosts.md).
    if (record.host !== null) spec.host = record.host;
    s.screen.create(cols, rows);
    try {
      await pty.spawn(spec);
    } catch (e) {
      s.screen.dispose();
      const err = spawnError(e, spec.host);
      if (CANNOT_START.has((e as { code?: string }).code ?? '')) s.end({ reason: 'error', exitCode: null, detail: err.message });
      throw err;
    }
    // The spec it started with is recorded whole (without the server's base environment): later
    // joins are checked against it (join-spec.ts) and REST shows what really runs.
    return { backend, sessionClass, state: 'running', cwd: spec.cwd, argv: spec.argv, env: { ...record.env, ...req.env }, cols, rows };
  };
}
