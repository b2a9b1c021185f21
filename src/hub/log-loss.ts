// What members are told when the store gave up on some of their session's log frames (docs/protocol.md
// §7.3): they got them live, but a replay will skip them. The session goes on; details are in the server log.
import { BindingError } from '../errors.ts';
import type { LogLoss } from '../ports.ts';

export function lossError(loss: LogLoss): BindingError {
  const frames = loss.first === loss.last ? `frame ${loss.first}` : `frames ${loss.first}-${loss.last}`;
  const why = loss.reason === 'queue_full' ? 'the database has been unavailable for too long' : 'writing to the database kept failing';
  return new BindingError('INTERNAL', `log ${frames} of this session could not be stored (${why}): a replay will skip ${loss.frames === 1 ? 'it' : 'them'}`, {
    metadata: { first_lost_sequence: String(loss.first), last_lost_sequence: String(loss.last) },
  });
}
