// The worker thread that runs the replay log's group commits on a connection of its own: libSQL's
// local driver is synchronous, so on the router's main thread every commit (statements, WAL write,
// checkpoints) would stall the output and keystrokes it relays.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createClient, type Client } from '@libsql/client';
import type { LogDatabase } from '../../../storage/log-committer.ts';
import type { CommitFailure, FromLogWorker, ToLogWorker } from './worker-log-committer.ts';
import { runInBackground } from './background-thread.ts';

/**
 * The same createClient as the store's, on the same URL, so the file is found the same way
 * (relative paths, `file:///abs`). The store has already set WAL mode (kept in the file) and
 * migrated the schema.
 *
 * `synchronous=NORMAL`: in WAL mode a commit is then written to the WAL without an fsync (the
 * checkpoints that copy it into the database still sync). A committed frame is in the OS's page
 * cache, so it survives a crash or SIGKILL of the process, which is what we promise; an OS crash
 * or power loss can lose the last commits (never corrupt the file). It is a per-connection setting:
 * the client pools connections, but this thread uses one at a time, so every commit runs on the
 * connection that ran the pragma. (Should the pool ever replace it, the new one commits with the
 * default FULL: slower, not less safe.)
 */
async function connect({ url, busyTimeoutMs }: LogDatabase): Promise<Client> {
  const client = createClient({ url, timeout: busyTimeoutMs });
  try {
    await client.execute('PRAGMA synchronous=NORMAL');
    return client;
  } catch (err) {
    client.close();
    throw err;
  }
}

/** The error as plain data: the main thread rebuilds it with the same name, message, stack and codes. */
function failure(err: unknown): CommitFailure {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const { code, extendedCode, rawCode } = err as { code?: unknown; extendedCode?: unknown; rawCode?: unknown };
  return {
    name: err.name,
    message: err.message,
    ...(err.stack !== undefined && { stack: err.stack }),
    ...(typeof code === 'string' && { code }),
    ...(typeof extendedCode === 'string' && { extendedCode }),
    ...(typeof rawCode === 'number' && { rawCode }),
  };
}

function serve(port: MessagePort, db: LogDatabase): void {
  // Connected at the first commit, and again after a failed attempt: an open error is that commit's to report.
  let client: Client | undefined;
  const handle = async (m: ToLogWorker): Promise<void> => {
    if (m.t === 'close') {
      client?.close();
      // Nothing else keeps this thread alive: it ends, and the main thread sees it exit.
      port.close();
      return;
    }
    let answer: FromLogWorker;
    try {
      client ??= await connect(db);
      await client.batch(m.statements, 'write');
      answer = { t: 'committed', id: m.id };
    } catch (err) {
      answer = { t: 'failed', id: m.id, error: failure(err) };
    }
    port.postMessage(answer);
  };
  // One message at a time, in arrival order: a close comes after the answers to every commit sent before it.
  let done = Promise.resolve();
  port.on('message', (m: ToLogWorker) => {
    done = done.then(() => handle(m));
  });
}

if (parentPort) {
  // Commits trail the journal, which already holds every frame (docs/architecture.md): background work.
  runInBackground();
  serve(parentPort, workerData as LogDatabase);
}
