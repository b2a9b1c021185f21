// Where the server that runs on a state directory listens: `<state dir>/server.json` (0600), written
// once it listens and removed when it stops, so `pty-ws token` prints the page URL of the server
// that is running rather than the configured default. A file a killed server left behind is not
// believed: only while the state directory's lock (src/core/state-lock.ts) is held by the pid it names.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as v from 'valibot';
import { stateDirHolder } from '../../core/state-lock.ts';
import { nodeStateLockPort } from './state-lock-port.ts';

export const SERVER_FILE = 'server.json';

const ServerFile = v.object({ url: v.pipe(v.string(), v.url()), pid: v.pipe(v.number(), v.integer()) });

/** Records this process's server at `url`; the function returned takes the record away again. */
export function recordServerAddress(stateDir: string, url: string): () => void {
  const path = join(resolve(stateDir), SERVER_FILE);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ url, pid: process.pid })}\n`, { mode: 0o600 });
  renameSync(temp, path);
  return () => {
    // Only our own: a server that started on the directory since has written its own.
    if (readRecord(path)?.pid === process.pid) rmSync(path, { force: true });
  };
}

/** The URL of the server running on `stateDir` now, or null when none runs there. */
export async function runningServerUrl(stateDir: string): Promise<string | null> {
  const record = readRecord(join(resolve(stateDir), SERVER_FILE));
  if (!record) return null;
  return (await stateDirHolder(stateDir, nodeStateLockPort)) === record.pid ? record.url : null;
}

function readRecord(path: string): v.InferOutput<typeof ServerFile> | null {
  try {
    const r = v.safeParse(ServerFile, JSON.parse(readFileSync(path, 'utf8')));
    return r.success ? r.output : null;
  } catch {
    return null;
  }
}
