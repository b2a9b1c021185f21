// How the REST commands (`sessions`, `share`) end: a failed call's reason, or a usage problem.
import { RestError } from '../../../client/sessions-api.ts';
import { printable } from './printable.ts';

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is the server running? npx pty-ws start)',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name did not resolve',
  ETIMEDOUT: 'timed out',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'the network is unreachable',
};

/**
 * "cannot reach http://…: connection refused" for a network failure, from its system error code
 * (in the message, as ws reports it, or in fetch's `cause`); undefined for any other failure.
 */
export function describeUnreachable(e: unknown, serverUrl: string): string | undefined {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const text = `${typeof e === 'string' ? e : e instanceof Error ? e.message : ''} ${typeof cause?.code === 'string' ? cause.code : ''} ${typeof cause?.message === 'string' ? cause.message : ''}`;
  const code = Object.keys(UNREACHABLE).find((c) => text.includes(c));
  return code ? `cannot reach ${serverUrl}: ${UNREACHABLE[code]}` : undefined;
}

/** A failed REST call on stderr, with a hint for the usual cause of a 401; exit status 1. */
export function reportFailure(e: unknown, serverUrl?: string): number {
  const unreachable = serverUrl === undefined ? undefined : describeUnreachable(e, serverUrl);
  if (unreachable) {
    process.stderr.write(`pty-ws: ${printable(unreachable)}\n`);
    return 1;
  }
  const hint = e instanceof RestError && e.status === 401 ? ' (pass --token or set PTY_WS_TOKEN)' : '';
  // The message may quote the server's words.
  process.stderr.write(`pty-ws: ${printable(e instanceof Error ? e.message : String(e))}${hint}\n`);
  return 1;
}

/** A usage problem of `pty-ws <command>` on stderr, with the command's usage; exit status 2. */
export function reportUsage(command: string, problem: string, usage: string): number {
  process.stderr.write(`pty-ws ${command}: ${problem}\n\n${usage}`);
  return 2;
}
