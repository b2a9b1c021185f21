// Who may decide what a session runs (docs/protocol.md §5.4, docs/security.md item 1).
// A join's process-start fields (argv, command, cwd, env) ask to start a program:
// - on a session whose program has started (or ended) they cannot change it: they are ignored, and
//   RoleAssigned lists them, whoever sent them;
// - before it starts they are a control act: a principal with only pty:observe may send none of
//   them, and only the creator or pty:admin may change the creator's spec.
// The backend and class are part of the spec before the start too; once the session has started,
// checkJoinBackend (session-host.ts) holds a join to what it runs on.
import { BindingError } from '../protocol/errors.ts';
import type { SessionHostFields } from '../protocol/pty-payloads.ts';
import type { SessionRecord } from '../ports/store.ts';

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

/**
 * Throws PERMISSION_DENIED when this join may not ask for what it asks; returns the process-start
 * fields it names that are ignored: the session's program has started already, or the server
 * decides what it runs. The start must then leave them out (withoutFields).
 */
export function checkJoinSpec(record: SessionRecord, join: SessionHostFields, who: JoinRights, d: Pick<SpawnDefaults, 'defaultShell' | 'defaultCwd'>): string[] {
  const named = namedProcessFields(join);
  if (record.state !== 'created') return named;
  const changed = changes(record, join, d);
  // The server's own session (the default one) runs what the server configured: any joiner's
  // process-start fields are ignored as on a running session, so the binding's example join works
  // against it (docs/protocol.md §5.4); its backend and class are still held to the record's.
  const hostChanges = changed.filter((f) => f === 'session_backend' || f === 'session_class');
  if (record.createdBy === null && !who.mayAdmin && hostChanges.length === 0) return named;
  if (!who.mayControl && (named.length > 0 || changed.length > 0)) {
    const fields = [...new Set([...named, ...changed])].join(', ');
    throw new BindingError('PERMISSION_DENIED', `${fields} on pty.join_session decide what the session runs: that needs pty:control, and this principal has only pty:observe (join without them to watch)`, {
      metadata: { reason: 'join.process_fields_need_control', fields },
    });
  }
  const isCreator = record.createdBy !== null && record.createdBy === who.principalId;
  if (changed.length > 0 && !isCreator && !who.mayAdmin) {
    const fields = changed.join(', ');
    const creator = record.createdBy === null ? 'the server' : `principal ${JSON.stringify(record.createdBy)}`;
    throw new BindingError('PERMISSION_DENIED', `session ${record.id} was created by ${creator}: only its creator or a pty:admin principal may change its ${fields} (join without them to run what it was created with)`, {
      metadata: { reason: 'session_spec.not_creator', fields },
    });
  }
  return [];
}

/** The join without the named process-start fields, for a start that ignores them. */
export function withoutFields<T extends SessionHostFields>(join: T, ignored: readonly string[]): T {
  const kept = { ...join };
  for (const f of ignored) delete kept[f as keyof SessionHostFields];
  return kept;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
