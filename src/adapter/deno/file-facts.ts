// The file-system calls src/services/private-files.ts checks with, on Deno.
import type { FileFacts, PathFacts } from '../../services/private-files.ts';

export const denoFileFacts: FileFacts = {
  uid: Deno.uid() ?? undefined,
  stat(path) {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return undefined;
      throw err;
    }
    const kind: PathFacts['kind'] = info.isDirectory ? 'directory' : info.isFile ? 'file' : info.isSocket ? 'socket' : 'other';
    return { uid: info.uid ?? -1, mode: (info.mode ?? 0) & 0o7777, kind };
  },
  chmod: (path, mode) => Deno.chmodSync(path, mode),
  mkdir: (path, mode) => Deno.mkdirSync(path, { recursive: true, mode }),
  touch(path, mode) {
    try {
      Deno.openSync(path, { write: true, createNew: true, mode }).close();
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    }
  },
};
