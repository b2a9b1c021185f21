// How the REST commands (`sessions`, `share`) end: a failed call's reason, or a usage problem.
import { RestError } from '../../../client/sessions-api.ts';

/** A failed REST call on stderr, with a hint for the usual cause of a 401; exit status 1. */
export function reportFailure(e: unknown): number {
  const hint = e instanceof RestError && e.status === 401 ? ' (pass --token or set PTY_WS_TOKEN)' : '';
  process.stderr.write(`pty-ws: ${e instanceof Error ? e.message : String(e)}${hint}\n`);
  return 1;
}

/** A usage problem of `pty-ws <command>` on stderr, with the command's usage; exit status 2. */
export function reportUsage(command: string, problem: string, usage: string): number {
  process.stderr.write(`pty-ws ${command}: ${problem}\n\n${usage}`);
  return 2;
}
