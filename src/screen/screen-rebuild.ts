// A session this router did not see start (it was running before a router restart, or has
// ended since), or whose screen model broke, gets it back from the log: the latest Keyframe repaints a fresh
// emulator, and the Output and Resize frames after it are folded in, so the first joiner's
// Keyframe is right. The keyframe cadence (docs/protocol.md §6) bounds how much there is to fold.
import { base64ToBytes } from '../core/ids.ts';
import { loggedPtyPayload } from '../protocol/logged-frames.ts';
import { outputBytes } from '../protocol/output-frame.ts';
import type { Screen, ScreenFactory } from '../ports/screen.ts';
import type { SessionRecord, Store } from '../ports/store.ts';

/** The screen, and the sequence of the last frame folded into it. */
export interface Rebuilt {
  screen: Screen;
  through: number;
}

export async function rebuildScreen(store: Store, record: SessionRecord, makeScreen: ScreenFactory): Promise<Rebuilt> {
  const keyframe = await store.lastFrameOfKind(record.id, 'Keyframe');
  const k = keyframe && loggedPtyPayload(keyframe.frame);
  const snapshot = k?.kind === 'Keyframe' ? base64ToBytes(k.snapshot) : null;
  let screen: Screen;
  let after = 0;
  if (keyframe && k?.kind === 'Keyframe' && snapshot) {
    screen = makeScreen(k.snapshot_cols, k.snapshot_rows);
    screen.write(snapshot, k.anchor_sequence);
    after = keyframe.sequence;
  } else {
    // No Keyframe yet: replay from the start of the log, at the size the session was started
    // with (the record's, unless a Resize came before the first Keyframe).
    screen = makeScreen(record.cols, record.rows);
  }
  let through = after;
  for (const entry of await store.readLog(record.id, after)) {
    through = entry.sequence;
    if (entry.kind === 'Output') {
      const bytes = outputBytes(entry);
      if (bytes) screen.write(bytes, entry.sequence);
      continue;
    }
    if (entry.kind !== 'Resize') continue;
    const p = loggedPtyPayload(entry.frame);
    if (p?.kind === 'Resize') {
      screen.resize(p.cols, p.rows, entry.sequence);
    }
  }
  return { screen, through };
}
