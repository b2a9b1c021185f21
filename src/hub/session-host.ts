// Session-host selection (docs/protocol.md §4.2, §5.4): which backend/class pairs run here, and the spawn spec.
import { BindingError } from '../protocol/errors.ts';
import type { SessionHostFields } from '../protocol/pty-payloads.ts';
import type { SessionHostOffer } from '../protocol/server-payloads.ts';
import type { SessionRecord } from '../ports/store.ts';
import type { SpawnSpec } from '../ports/pty-host.ts';
import { confinedEnvProblem, type ConfinementReport } from '../core/session-confinement.ts';
import { joinArgv, joinCwd, recordedArgv, recordedCwd, type SpawnDefaults } from './join-spec.ts';

export interface SessionHostCaps {
  /** backend → the one class it runs as. */
  backends: Record<string, string>;
  defaultBackend: string;
  /** The host confines sessions (another user or a sandbox): some variables are refused (session-confinement.ts). */
  confined: boolean;
}

/** The class each backend runs as (docs/protocol.md §4.2): native is direct, multiplexers are managed. */
const BACKEND_CLASS: Record<string, string> = { native: 'direct', tmux: 'managed', screen: 'managed', zellij: 'managed' };

/** What binding_hello advertises: exactly the backends the PTY host reported it can run. */
export function sessionHostCaps(hostBackends: readonly string[], confinement?: ConfinementReport): SessionHostCaps {
  const backends: Record<string, string> = {};
  for (const b of hostBackends) if (Object.hasOwn(BACKEND_CLASS, b)) backends[b] = BACKEND_CLASS[b]!;
  if (!backends.native) throw new Error(`the PTY host offers no native backend (it reported: ${hostBackends.join(', ') || 'none'})`);
  const confined = confinement !== undefined && (confinement.user !== null || confinement.sandbox !== 'none');
  return { backends, defaultBackend: 'native', confined };
}

/** A session's variables as a confining host will take them: refused here already, before anything is stored. */
export function checkSessionEnv(caps: SessionHostCaps, env: Record<string, string> | undefined): void {
  const problem = caps.confined && env ? confinedEnvProblem(env) : undefined;
  if (problem) throw new BindingError('INVALID_REQUEST', problem, { metadata: { reason: 'env.refused' } });
}

export function helloSessionHost(caps: SessionHostCaps): SessionHostOffer {
  const classes = [...new Set(Object.values(caps.backends))];
  return {
    supported_backends: Object.keys(caps.backends),
    default_backend: caps.defaultBackend,
    supported_classes: classes,
    default_class: caps.backends[caps.defaultBackend],
    observe_supported: true,
    drive_supported: true,
    reattach_supported: true,
  };
}

/** Validates backend and class as a pair; fails closed before any role or process exists. */
export function selectBackend(caps: SessionHostCaps, backend: string | undefined, cls: string | undefined): { backend: string; sessionClass: string } {
  const b = backend || caps.defaultBackend;
  const expected = caps.backends[b];
  if (!expected) {
    throw new BindingError('UNSUPPORTED_OPERATION', `session_backend "${b}" is not implemented here (supported: ${Object.keys(caps.backends).join(', ')})`, {
      metadata: { reason: 'session_backend.not_implemented', session_backend: b },
      extra: { reason: 'session_backend.not_implemented' },
    });
  }
  const c = cls || expected;
  if (c !== expected) {
    throw new BindingError('UNSUPPORTED_OPERATION', `session_class "${c}" is not implemented for backend "${b}" (supported: ${expected})`, {
      metadata: { reason: 'session_class.not_implemented', session_class: c },
      extra: { reason: 'session_class.not_implemented' },
    });
  }
  return { backend: b, sessionClass: c };
}

/**
 * A join names the backend/class of a session that already runs: it must be one this server
 * offers (fail closed, as for a new session) and the one the session runs on.
 */
export function checkJoinBackend(caps: SessionHostCaps, record: SessionRecord, join: SessionHostFields): void {
  const requested = join.session_backend || join.backend;
  if (!requested && !join.session_class) return;
  const { backend, sessionClass } = selectBackend(caps, requested || record.backend, join.session_class);
  if (backend !== record.backend || sessionClass !== record.sessionClass) {
    throw new BindingError('INVALID_REQUEST', `session ${record.id} already runs on ${record.backend}/${record.sessionClass}, not ${backend}/${sessionClass}`, {
      metadata: { reason: 'session_backend.mismatch', session_backend: record.backend },
    });
  }
}

/** A failed spawn as the joining client sees it: what went wrong, in `reason` and the message; `host` is the remote host it was asked of. */
export function spawnError(e: unknown, host?: string): BindingError {
  const err = e as { code?: string; message?: string };
  if (err.code === 'not_allowed') {
    const named: Record<string, string> = host === undefined ? {} : { host };
    return new BindingError('PERMISSION_DENIED', err.message ?? 'refused by the host\'s policy', {
      metadata: { reason: 'host_policy.command_not_allowed', ...named },
      extra: { reason: 'host_policy.command_not_allowed', ...named },
    });
  }
  if (err.code === 'backend_unavailable') {
    return new BindingError('UNSUPPORTED_OPERATION', err.message ?? 'backend unavailable', {
      metadata: { reason: 'session_backend.not_implemented' },
      extra: { reason: 'session_backend.not_implemented' },
    });
  }
  if (err.code === 'bad_env') return new BindingError('INVALID_REQUEST', err.message ?? 'environment refused', { metadata: { reason: 'env.refused' } });
  return new BindingError('INVALID_REQUEST', `could not start the session's process: ${err.message ?? String(e)}`, {
    metadata: { reason: `spawn.${err.code ?? 'failed'}` },
  });
}

/** What the process is: the join's fields over the session record's over the server defaults. */
export function buildSpawnSpec(record: SessionRecord, join: SessionHostFields, cols: number, rows: number, d: SpawnDefaults): SpawnSpec {
  return {
    sessionId: record.id,
    backend: record.backend,
    argv: joinArgv(join) ?? recordedArgv(record, d),
    cwd: joinCwd(join) ?? recordedCwd(record, d),
    env: { ...d.baseEnv, ...record.env, ...join.env },
    cols,
    rows,
  };
}
