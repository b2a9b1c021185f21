// The worker thread that runs every session's terminal emulator, off the router's output path.
import { parentPort } from 'node:worker_threads';
import { ScreenModel } from '../../screen/screen.ts';
import type { FromWorker, ToWorker } from './screen-worker-messages.ts';
import { runInBackground } from './background-thread.ts';

function serve(port: NonNullable<typeof parentPort>): void {
  const screens = new Map<number, ScreenModel>();
  // A screen that throws fails alone (its owner rebuilds it from the log); the others go on.
  const failed = (id: number, e: unknown) => {
    screens.delete(id);
    port.postMessage({ t: 'failed', id, error: e instanceof Error ? e : new Error(String(e)) } satisfies FromWorker);
  };
  port.on('message', (m: ToWorker) => {
    try {
      handle(m);
    } catch (e) {
      failed(m.id, e);
    }
  });
  const handle = (m: ToWorker) => {
    switch (m.t) {
      case 'create':
        screens.set(m.id, new ScreenModel(m.cols, m.rows, (bytes) => port.postMessage({ t: 'parsed', id: m.id, bytes } satisfies FromWorker), { onFailed: (e) => failed(m.id, e) }));
        break;
      case 'write':
        screens.get(m.id)?.write(m.data, m.seq);
        break;
      case 'resize':
        screens.get(m.id)?.resize(m.cols, m.rows, m.seq);
        break;
      case 'snapshot': {
        const screen = screens.get(m.id);
        if (!screen) port.postMessage({ t: 'snapshot', req: m.req, error: 'no such screen' } satisfies FromWorker);
        else
          void (m.now ? screen.snapshotNow() : screen.snapshot()).then(
            (snap) => port.postMessage({ t: 'snapshot', req: m.req, snap } satisfies FromWorker),
            (e: Error) => port.postMessage({ t: 'snapshot', req: m.req, error: e.message } satisfies FromWorker),
          );
        break;
      }
      case 'dispose':
        screens.get(m.id)?.dispose();
        screens.delete(m.id);
        break;
    }
  };
}

if (parentPort) {
  // Keyframes are cut from it; nothing a client waits for per keystroke: background work.
  runInBackground();
  serve(parentPort);
}
