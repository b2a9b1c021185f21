// The messages between the router's main thread (worker-screens.ts) and the screen worker
// (screen-worker.ts): a contract of its own, so the worker imports no main-thread code.
import type { ScreenSnapshot } from '../../ports/screen.ts';

export type ToWorker =
  | { t: 'create'; id: number; cols: number; rows: number }
  | { t: 'write'; id: number; data: Uint8Array; seq: number }
  | { t: 'resize'; id: number; cols: number; rows: number; seq: number }
  | { t: 'snapshot'; id: number; req: number; now: boolean }
  | { t: 'dispose'; id: number };

export type FromWorker =
  | { t: 'parsed'; id: number; bytes: number }
  | { t: 'snapshot'; req: number; snap?: ScreenSnapshot; error?: string }
  /** The screen's emulator threw: the worker has let it go (and goes on with the others). An Error crosses with its stack and cause (structured clone). */
  | { t: 'failed'; id: number; error: Error };
