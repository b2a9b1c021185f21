// What members are told of log frames the store will never have (docs/protocol.md §7.3): live, when
// the store gave up on them (they got them, but a replay will skip them); and in a replay that
// crosses such a run, or numbers a crash skipped (§6.2). The session goes on; details are in the
// server log.
import { BindingError } from '../protocol/errors.ts';
import type { LogLoss, LostRange } from '../ports/store.ts';

export function lossError(loss: LogLoss): BindingError {
  const frames = loss.first === loss.last ? `frame ${loss.first}` : `frames ${loss.first}-${loss.last}`;
  const why = loss.reason === 'queue_full' ? 'the database has been unavailable for too long' : 'writing to the database kept failing';
  return new BindingError('INTERNAL', `log ${frames} of this session could not be stored (${why}): a replay will skip ${loss.frames === 1 ? 'it' : 'them'}`, {
    metadata: lostMetadata(loss),
    extra: lostFields(loss),
  });
}

/** Said in a replay, in place of the run it skips: the client's screen is repainted by the next Keyframe. */
export function lostInReplayError(range: LostRange): BindingError {
  const frames = range.first === range.last ? `frame ${range.first}` : `frames ${range.first}-${range.last}`;
  const why = range.reason === 'skipped' ? 'numbers a router that crashed may have used' : 'the database never stored them';
  return new BindingError('INTERNAL', `log ${frames} of this session are lost (${why}): the replay skips them, and the next Keyframe repaints the screen`, {
    metadata: lostMetadata(range),
    extra: lostFields(range),
  });
}

function lostFields(range: { first: number; last: number }): { first_lost_sequence: number; last_lost_sequence: number } {
  return { first_lost_sequence: range.first, last_lost_sequence: range.last };
}

function lostMetadata(range: { first: number; last: number }): Record<string, string> {
  return { first_lost_sequence: String(range.first), last_lost_sequence: String(range.last) };
}
