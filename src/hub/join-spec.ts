// Who may decide what a session runs (docs/security.md, item 1). A join's process-start fields
// (argv, command, cwd, env, backend, class) are a control act: they start a program. They are
// checked against the session's recorded spec before any role is assigned or process started:
// - a principal with only pty:observe may send none of them;
// - once the process has started, they must match what it was started with;
// - before it starts, they may change the creator's spec only for the creator or pty:admin.
import { BindingError } from '../errors.ts';
import type { SessionHostFields } from '../protocol/pty-payloads.ts';
import type { SessionRecord } from '../ports.ts';

/** What a joining connection's principal may do to a session's spec. */
/** The server's defaults for what a session runs. */
export interface SpawnDefaults {
  defaultShell: string;
  defaultCwd: string;
  baseEnv: Record<string, string>;
}

export interface JoinRights {
  principalId: string;
  /** pty:control or more. */
  mayControl: boolean;
  /** pty:admin: may change any session's spec before it starts. */
  mayAdmin: boolean;
}

const shell = (c: string | null | undefined) => (c ? ['/bin/sh', '-lc', c] : undefined);
const nonEmpty = (s: string | null | undefined) => (s ? s : undefined);

/** The argv a join asks for, or undefined when it names none. */
export function joinArgv(join: SessionHostFields): string[] | undefined {
  return join.argv ?? shell(join.command);
}

/** The join's non-empty cwd (binding: an empty cwd means "the stored one"). */
export function joinCwd(join: SessionHostFields): string | undefined {
  return nonEmpty(join.cwd) ?? nonEmpty(join.working_dir);
}

/** The argv and cwd the session runs (or will run) with when a join names neither. */
export function recordedArgv(record: SessionRecord, d: Pick<SpawnDefaults, 'defaultShell'>): string[] {
  return record.argv ?? shell(record.command) ?? d.defaultShell.split(/\s+/).filter(Boolean);
}

export function recordedCwd(record: SessionRecord, d: Pick<SpawnDefaults, 'defaultCwd'>): string {
  return nonEmpty(record.cwd) ?? d.defaultCwd;
}

/** Process-start fields present in a join, by their wire names. */
function namedProcessFields(join: SessionHostFields): string[] {
  const named: string[] = [];
  if (join.argv) named.push('argv');
  if (join.command) named.push('command');
  if (nonEmpty(join.cwd)) named.push('cwd');
  if (nonEmpty(join.working_dir)) named.push('working_dir');
  if (join.env && Object.keys(join.env).length > 0) named.push('env');
  return named;
}

/**
 * The backend and class a join asks for, undefined where it asks for none. An empty string asks
 * for nothing, as an empty cwd does: the check and the start read the fields through this one
 * reading, so what the check lets pass as "not asked" is never taken as a name when the process
 * starts (docs/security.md, item 1).
 */
export function askedHost(join: SessionHostFields): { backend: string | undefined; sessionClass: string | undefined } {
  return { backend: join.session_backend || join.backend || undefined, sessionClass: join.session_class || undefined };
}

/** The parts of the session's spec this join would change. */
function changes(record: SessionRecord, join: SessionHostFields, d: Pick<SpawnDefaults, 'defaultShell' | 'defaultCwd'>): string[] {
  const changed: string[] = [];
  const argv = joinArgv(join);
  if (argv && !sameList(argv, recordedArgv(record, d))) changed.push(join.argv ? 'argv' : 'command');
  const cwd = joinCwd(join);
  if (cwd !== undefined && cwd !== recordedCwd(record, d)) changed.push('cwd');
  if (join.env && Object.entries(join.env).some(([k, v]) => record.env[k] !== v)) changed.push('env');
  const asked = askedHost(join);
  if (asked.backend !== undefined && asked.backend !== record.backend) changed.push('session_backend');
  if (asked.sessionClass !== undefined && asked.sessionClass !== record.sessionClass) changed.push('session_class');
  return changed;
}

/** Throws PERMISSION_DENIED or INVALID_REQUEST when this join may not ask for what it asks. */
export function checkJoinSpec(record: SessionRecord, join: SessionHostFields, who: JoinRights, d: Pick<SpawnDefaults, 'defaultShell' | 'defaultCwd'>): void {
  const named = namedProcessFields(join);
  const changed = changes(record, join, d);
  if (!who.mayControl && (named.length > 0 || changed.length > 0)) {
    const fields = [...new Set([...named, ...changed])].join(', ');
    throw new BindingError('PERMISSION_DENIED', `${fields} on pty.join_session decide what the session runs: that needs pty:control, and this principal has only pty:observe (join without them to watch)`, {
      metadata: { reason: 'join.process_fields_need_control', fields },
    });
  }
  if (changed.length === 0) return;
  const fields = changed.join(', ');
  if (record.state !== 'created') {
    throw new BindingError('INVALID_REQUEST', `session ${record.id} has already started; a join cannot change its ${fields} (join without them, or create a new session)`, {
      metadata: { reason: 'session_spec.mismatch', fields },
    });
  }
  const isCreator = record.createdBy !== null && record.createdBy === who.principalId;
  if (!isCreator && !who.mayAdmin) {
    const creator = record.createdBy === null ? 'the server' : `principal ${JSON.stringify(record.createdBy)}`;
    throw new BindingError('PERMISSION_DENIED', `session ${record.id} was created by ${creator}: only its creator or a pty:admin principal may change its ${fields} (join without them to run what it was created with)`, {
      metadata: { reason: 'session_spec.not_creator', fields },
    });
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
