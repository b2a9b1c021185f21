// Session-host selection (pty-ws-v1 §5.1.1): which backend/class pairs run here, and the spawn spec.
import { BindingError } from '../errors.ts';
import type { SessionHostFields } from '../protocol/pty-payloads.ts';
import type { SessionRecord, SpawnSpec } from '../ports.ts';

export interface SessionHostCaps {
  /** backend → the one class it runs as. */
  backends: Record<string, string>;
  defaultBackend: string;
}

export const NATIVE_ONLY: SessionHostCaps = { backends: { native: 'direct' }, defaultBackend: 'native' };

export function helloSessionHost(caps: SessionHostCaps) {
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

export interface SpawnDefaults {
  defaultShell: string;
  defaultCwd: string;
  baseEnv: Record<string, string>;
}

/** What the process is: the join's fields over the session record's over the server defaults. */
export function buildSpawnSpec(record: SessionRecord, join: SessionHostFields, cols: number, rows: number, d: SpawnDefaults): SpawnSpec {
  const sh = (c: string | null | undefined) => (c ? ['/bin/sh', '-lc', c] : undefined);
  const argv = join.argv ?? sh(join.command) ?? record.argv ?? sh(record.command) ?? d.defaultShell.split(/\s+/).filter(Boolean);
  const cwd = nonEmpty(join.cwd) ?? nonEmpty(join.working_dir) ?? nonEmpty(record.cwd) ?? d.defaultCwd;
  return {
    sessionId: record.id,
    argv,
    cwd,
    env: { ...d.baseEnv, ...record.env, ...join.env },
    cols,
    rows,
  };
}

function nonEmpty(s: string | null | undefined): string | undefined {
  return s ? s : undefined;
}
