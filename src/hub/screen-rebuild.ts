// A session this router did not see start (it was running before a router restart, or has
// ended since) gets its screen model back from the log: the latest Keyframe repaints a fresh
// emulator, and the Output and Resize frames after it are folded in, so the first joiner's
// Keyframe is right. The keyframe cadence (DECISIONS §6) bounds how much there is to fold.
import { base64ToBytes } from '../ids.ts';
import type { LogEntry, Screen, ScreenFactory, SessionRecord, Store } from '../ports.ts';

interface FramePayload {
  kind?: string;
  data?: string;
  snapshot?: string;
  snapshot_cols?: number;
  snapshot_rows?: number;
  anchor_sequence?: number;
  cols?: number;
  rows?: number;
}

export async function rebuildScreen(store: Store, record: SessionRecord, makeScreen: ScreenFactory): Promise<Screen> {
  const keyframe = await store.lastFrameOfKind(record.id, 'Keyframe');
  const k = keyframe ? payloadOf(keyframe) : undefined;
  const snapshot = k?.snapshot ? base64ToBytes(k.snapshot) : null;
  let screen: Screen;
  let after = 0;
  if (keyframe && k?.snapshot_cols && k.snapshot_rows && snapshot) {
    screen = makeScreen(k.snapshot_cols, k.snapshot_rows);
    screen.write(snapshot, k.anchor_sequence ?? 0);
    after = keyframe.sequence;
  } else {
    // No Keyframe yet: replay from the start of the log, at the size the session was started
    // with (the record's, unless a Resize came before the first Keyframe).
    screen = makeScreen(record.cols, record.rows);
  }
  for (const entry of await store.readLog(record.id, after)) {
    const p = payloadOf(entry);
    if (entry.kind === 'Output' && p.data) {
      const bytes = base64ToBytes(p.data);
      if (bytes) screen.write(bytes, entry.sequence);
    } else if (entry.kind === 'Resize' && p.cols && p.rows) {
      screen.resize(p.cols, p.rows, entry.sequence);
    }
  }
  return screen;
}

function payloadOf(entry: LogEntry): FramePayload {
  try {
    return ((JSON.parse(entry.frame) as { payload?: FramePayload }).payload ?? {}) as FramePayload;
  } catch {
    return {};
  }
}
