// What members hear about their session's PTY host being out of reach and back (docs/protocol.md
// §7.3): binding Error frames, `INTERNAL` and retryable, the connection staying open; for a remote
// host (docs/remote-hosts.md) with `reason` `host_unreachable`, then `host_linked` once it is back.
import { BindingError } from '../protocol/errors.ts';

/** Why a running process is out of reach: the message members heard, and the remote host, if it is one. */
export interface HostDown {
  message: string;
  host?: string;
}

/** The error a member hears, and its input and resizes get, while its session's host is out of reach. */
export function hostDownError(down: HostDown, message = down.message): BindingError {
  if (down.host === undefined) return new BindingError('INTERNAL', message);
  return new BindingError('INTERNAL', message, { metadata: { reason: 'host_unreachable', host: down.host }, extra: { reason: 'host_unreachable' } });
}

/** The notice that a remote host linked again: the binding has no frame but Error to tell a member something. */
export function hostLinkedNotice(host: string): BindingError {
  return new BindingError('INTERNAL', `the PTY host ${host} is linked again: input is taken and output goes on`, { metadata: { reason: 'host_linked', host }, extra: { reason: 'host_linked' } });
}
