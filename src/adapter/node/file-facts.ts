// The file-system calls src/services/private-files.ts checks with, on Node.
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import type { FileFacts, PathFacts } from '../../services/private-files.ts';

export const nodeFileFacts: FileFacts = {
  uid: process.getuid?.(),
  stat(path) {
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info) return undefined;
    const kind: PathFacts['kind'] = info.isDirectory() ? 'directory' : info.isFile() ? 'file' : info.isSocket() ? 'socket' : 'other';
    return { uid: info.uid, mode: info.mode & 0o7777, kind };
  },
  chmod: (path, mode) => chmodSync(path, mode),
  mkdir: (path, mode) => void mkdirSync(path, { recursive: true, mode }),
  touch(path, mode) {
    try {
      closeSync(openSync(path, 'wx', mode));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  },
};
